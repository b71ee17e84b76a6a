// nccl-tests results read back, so a measured run can be set beside the simulator's prediction:
// the stdout table of any collective (every layout since 2018, launcher prefixes, noise lines)
// and the JSON written with nccl-tests' -J option.
//
//   std::vector<sim::NcclTestsTable> tables = sim::parse_nccl_tests_file_text(text, "run.log");
//   for (const sim::NcclTestsRow& r : tables[0].rows)
//     if (r.out_of_place) use(r.size_bytes, r.out_of_place->time_us, r.out_of_place->busbw_gbps);
//
// Every problem is a twinccl::ConfigError naming the source, the line and the offending text (cut
// to 80 characters, unprintable bytes escaped); nothing else escapes. A line that looks like a row
// whose size or count is not a whole number is not read and is listed in the table's `skipped`;
// a log with no row read is an error saying why (with the first skipped lines). The formats
// accepted are listed in tests/fidelity/logs/FORMATS.md.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "twinccl/data_type.h"
#include "twinccl/operation.h"
#include "twinccl/topologies/limits.h"

namespace twinccl::topo {
class Topology;
}

namespace twinccl::sim {

// Bounds on hostile input.
inline constexpr std::size_t kNcclTestsMaxBytes = 64u << 20;  // one log or JSON file
inline constexpr std::size_t kNcclTestsMaxLineBytes = 16384;  // one line of a log
// Rows over all tables of a file, and over all logs of one `twinccl compare` or `calibrate`.
inline constexpr std::size_t kNcclTestsMaxRows = 100000;
// nccl-tests' -g (nGpus): the GPUs one thread drives, 1..this.
inline constexpr int kNcclTestsMaxGpusPerThread = 1024;
// Ranks of one log: a device line's rank is below this, and `compare` / `calibrate` --ranks
// and --nodes are at most this: a topology's most GPUs (2^20, topologies/limits.h), past which no
// topology could price the log.
inline constexpr int kNcclTestsMaxRanks = topo::limits::max_gpus;

// One block of a row: out-of-place or in-place.
struct NcclTestsBlock {
  double time_us = 0;
  double algbw_gbps = 0;
  double busbw_gbps = 0;
  // #wrong (a count), or the float error column of pre-2022 layouts; nullopt for N/A.
  std::optional<double> wrong;
};

struct NcclTestsRow {
  std::size_t size_bytes = 0;  // nccl-tests' size: the largest buffer of a rank
  // nccl-tests' count, which is NCCL's count: per rank for reduce_scatter, all_gather, all_to_all,
  // gather and scatter (size = nranks * count * typesize there), the whole buffer otherwise.
  std::size_t count = 0;
  DataType dtype = DataType::float32;
  std::string redop;  // "sum", "none", ...; "" when the layout has no redop column or it is blank
  bool redop_blank =
      false;      // the layout has a redop column and the row leaves it blank (hypercube)
  int root = -1;  // -1: none (or no root column)
  std::optional<NcclTestsBlock> out_of_place, in_place;  // unset when printed blank
  int line = 0;  // 1-based line in the log; JSON: 1-based index in "results"
  // The algorithm and protocol NCCL ran this row's size with, as NCCL's own per-call lines say
  // (NCCL_DEBUG_SUBSYS=TUNING, in the log or an NCCL_DEBUG_FILE: nccl_ran_choice.h), in twinccl's
  // names ("ring", "ll128"); "" = not said. request_of prices the row with them. `ran_from`:
  // where ("run.log line 1234").
  std::string ran_algorithm, ran_protocol, ran_from;
};

// A line that looks like a result row but is not read as one: a size or count that is not a whole
// number ("1P", "-16", "1.5e3"). Reported with its line, never dropped silently.
struct NcclTestsSkippedLine {
  int line = 0;     // 1-based line in the log
  std::string why;  // "the size '1P' is not a whole number of bytes"
};

struct NcclTestsTable {
  std::string source;      // the file name given to the parser
  int first_line = 0;      // line of the first row
  std::string collective;  // "all_reduce", "all_to_all", ...; "sendrecv" / "hypercube" have no kind
  std::optional<OpKind> kind;
  // Where the collective came from: "--collective", "test-starting line", "program name",
  // "file name" or "columns" (inferred from redop, root and size / count).
  std::string collective_from;
  int ranks = 0;  // 0 = unknown (no device block, or a truncated one): give --ranks
  int nodes = 0;  // distinct hostnames of the device block; 0 = unknown: give --nodes
  bool devices_truncated = false;
  // The GPU the device block's first line names ("NVIDIA GB300", "NVIDIA H100 80GB HBM3"); ""
  // when none was printed.
  std::string gpu_name;
  // GPUs one host thread drove: "nGpus G" of the "# nThread T nGpus G ..." line (-g G), or -J's
  // config.ngpus; 0 = the log does not say.
  int gpus_per_thread = 0;
  DataType dtype = DataType::float32;  // the first row's
  std::string nccl_version;            // "2.26.2+cuda12.8"; "" when not printed
  // Whose version it is: "NCCL", or "RCCL" for RCCL's "RCCL version : 2.22.3-develop:f5b15f2"
  // (rccl-tests with NCCL_DEBUG=VERSION), which is the NCCL release RCCL tracks.
  std::string nccl_version_library = "NCCL";
  int nccl_version_line = 0;  // its line in the log; 0 = JSON's nccl_version (or none)
  bool complete = false;      // the footer (average bus bandwidth) was seen
  // NCCL_ALGO / NCCL_PROTO the run had, as given ("Ring", "NVLS,NVLSTree", "^LL128"; "" = not
  // set: NCCL's own choice), and where from: "line 12" of NCCL's "NCCL_ALGO set by environment
  // to Ring" (NCCL_DEBUG=INFO) or of an environment dump "NCCL_ALGO=Ring", or "--algo"/"--proto".
  // nccl_env_choice.h reads them.
  std::string nccl_algo, nccl_algo_from, nccl_proto, nccl_proto_from;
  std::vector<NcclTestsRow> rows;
  // Rows whose size NCCL's per-call lines named with two different choices (nccl_ran_choice.h):
  // they keep none, and are priced with NCCL's choice as the simulator reads it.
  int ran_conflicting = 0;
  // Row-like lines not read, in this table or before it (after the previous one); those after
  // the last table belong to the last table.
  std::vector<NcclTestsSkippedLine> skipped;
};

// What the user knows better than a log: applied to every table (empty / 0 = from the log).
struct NcclTestsParseOptions {
  std::string collective;  // "all_reduce", "allreduce", "all_reduce_perf", ...
  int ranks = 0;
  int nodes = 0;
  // NCCL_ALGO / NCCL_PROTO the run had, in NCCL's syntax ("Ring", "NVLS,NVLSTree"); replaces
  // what the log says.
  std::string nccl_algo = {}, nccl_proto = {};
};

// The stdout of one or more nccl-tests runs: one table per run (or per column header).
std::vector<NcclTestsTable> parse_nccl_tests_output(std::string_view text, std::string_view source,
                                                    const NcclTestsParseOptions& options = {});
// nccl-tests' -J JSON: one table.
std::vector<NcclTestsTable> parse_nccl_tests_json(std::string_view text, std::string_view source,
                                                  const NcclTestsParseOptions& options = {});
// Either of the two, by the first non-blank byte ('{' = JSON).
std::vector<NcclTestsTable> parse_nccl_tests_file_text(std::string_view text,
                                                       std::string_view source,
                                                       const NcclTestsParseOptions& options = {});

// Throws ConfigError naming "<source>:<line>" when a row's size and count contradict each other:
// nccl-tests prints size = count x the type's bytes, times the ranks (table.ranks, 1 when unknown)
// where count is per rank: all_gather, reduce_scatter, alltoall, gather, scatter (table.kind; a
// table without one, sendrecv or hypercube, may be either). A row with count 0 is not checked
// (nothing is predicted for it).
// `compare` and `calibrate` call it on every row they predict; no product can overflow.
void check_row_size(const NcclTestsTable& table, const NcclTestsRow& row);

// How many nodes the first `ranks` GPUs of `topology` span (ranks 1..gpu_count()): what a log's
// ranks take when predicted on it. `compare` and `calibrate` refuse a log whose own node count
// differs (its rows would be priced on another machine).
int nodes_spanned(const topo::Topology& topology, int ranks);
// What to add to that refusal when the topology's nodes are larger than the log's hosts (`spanned`
// < log.nodes) and the log may be an NVL72's: a GB200 / GB300 NVL72 log names every 4-GPU tray a
// host, and a preset's node is the rack's NVLink domain; --nodes gives the domains. Only for a log
// of at most 4 GPUs per host or whose device block names GB200 / GB300 GPUs (an 8-GPU H100 host
// is no tray: one NVLink domain for two of them would be the wrong machine); "" otherwise.
std::string nvlink_domain_hint(const NcclTestsTable& log, int spanned);

// NCCL_VERSION_CODE of a version as a log prints it ("2.26.2+cuda12.8" -> 22602; major x 10000 +
// minor x 100 + patch, NCCL's code from 2.9), for Request::nccl_version; 0 when `version` does not
// start with major.minor.patch of such a version (empty, "2.8.4", garbage).
int nccl_version_code(std::string_view version);

// Which NCCL's tuning model prices a table's rows (request_of's Request::nccl_version) and, where
// that is not the version the log printed, a note saying so for the user's eyes (`compare` and
// `calibrate` print it beside the log):
//   "2.26.2+cuda12.8"      code 22602, no note; "" (not printed): 0, the newest model, no note
//   "2.8.4" (before 2.9)   the oldest model: "NCCL version 2.8.4 at run.log:3 is older than the
//                          oldest tuning model (2.9.0); priced as 2.9.0"
//   "2.26", "2.26.x"       the newest model: "unreadable NCCL version '2.26' at run.log:3;
//                          priced as the newest model (NCCL 2.30.3 and later)"
//   "10.0.0" (past the NCCL_VERSION_CODE range) the newest model, with a note
// An RCCL version (nccl_version_library "RCCL") is priced as the NCCL release of its number, which
// RCCL tracks, always with a note: "RCCL version 2.22.3-develop:f5b15f2 at run.log:13 is priced as
// NCCL 2.22.3, the NCCL release it tracks (...)"; the notes above say "RCCL version" for it.
struct NcclVersionPricing {
  int code = 0;  // for Request::nccl_version: an NCCL_VERSION_CODE, 0 = the newest model
  // "" where the log's own NCCL version (or, printing none, the newest) prices it
  std::string note;
};
NcclVersionPricing nccl_version_pricing(const NcclTestsTable& table);

}  // namespace twinccl::sim
