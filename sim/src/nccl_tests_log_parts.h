// What the nccl-tests stdout parser and the -J JSON parser share: bounded error messages, number
// parsing, naming the collective (from a name, a program, a file name or the columns) and the
// last step of every table (overrides, ranks and nodes, the collective).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "twinccl/sim/nccl_ran_choice.h"
#include "twinccl/sim/nccl_tests_log.h"

namespace twinccl::sim::nccl_tests {

// At most `max` characters of `text`, unprintable bytes as \xNN, "..." when cut (core's
// shown_value).
std::string shown(std::string_view text, std::size_t max = 80);
// "<source>:<line>: <why>: '<text>'" (line 0 and empty text are left out).
[[noreturn]] void fail(std::string_view source, int line, std::string_view why,
                       std::string_view text = {});

std::optional<unsigned long long> parse_unsigned(std::string_view token);
std::optional<long long> parse_integer(std::string_view token);
// A whole token as a double (finite or not; callers check). "1e+03", "16330", "40.12".
std::optional<double> parse_real(std::string_view token);

struct Collective {
  std::string name;  // twinccl's name ("all_to_all") or "sendrecv" / "hypercube"
  std::optional<OpKind> kind;
};
// "all_reduce", "allreduce", "all_reduce_perf", "alltoall", ... (case and '_'/'-' ignored).
std::optional<Collective> collective_named(std::string_view text);
// The collective of the first nccl-tests program ("<name>_perf") named in a line.
std::optional<Collective> collective_of_program(std::string_view line);
// The one collective a file name names ("...-all_reduce-g8.log"); nullopt when none or several.
std::optional<Collective> collective_of_file_name(std::string_view path);

// What a parser found about a table, before the last step.
struct TableHints {
  std::optional<Collective> from_start_line;  // "# Collective test starting: X_perf"
  std::optional<Collective> from_program;     // "X_perf" in a command line / argv
  int device_ranks = 0;                       // distinct ranks of a complete device block
  int device_nodes = 0;                       // distinct hostnames
  bool devices_truncated = false;
  int gpus_per_thread = 0;  // "nGpus G" of the "# nThread" line, 0 = none
  std::string gpu_name;     // the device block's first GPU ("NVIDIA GB300"), "" = none
};

// Applies the options, fills ranks, nodes, dtype and the collective (options, start line,
// program, file name, then the columns); throws ConfigError asking for --collective when the
// columns fit several collectives.
void finish_table(NcclTestsTable& table, const TableHints& hints,
                  const NcclTestsParseOptions& options);

// Why a line that looks like a result row (a number-like first field, at least three numbers
// after it) cannot be read as one: its size or count is not a whole number ("1P", "-16", "2.5");
// nullopt for a row (both whole numbers) and for a line that does not look like one ("1 more
// process has sent help message ...").
std::optional<std::string> unreadable_row(const std::vector<std::string_view>& tokens);
// A log whose row-like lines were all unreadable: the error names the first three and why.
[[noreturn]] void fail_no_row_read(std::string_view source,
                                   const std::vector<NcclTestsSkippedLine>& skipped);

// The value a log line gives NCCL's `variable` (NCCL_ALGO, NCCL_PROTO): NCCL's own "NCCL INFO
// NCCL_ALGO set by environment to Ring" (NCCL_DEBUG=INFO) or an environment dump or command
// line ("NCCL_ALGO=Ring", "export NCCL_PROTO='Simple'", "mpirun -x NCCL_ALGO=Tree ..."); nullopt
// when the line gives none.
std::optional<std::string> nccl_env_value(std::string_view line, std::string_view variable);
// The last NCCL_ALGO / NCCL_PROTO a log gave, with "line N", for the tables after it.
struct NcclEnv {
  std::string algo, algo_from, proto, proto_from;
  void read(std::string_view line, int line_no);
  void apply(NcclTestsTable& table) const;
};

// NCCL's per-call choice lines of a run (twinccl/sim/nccl_ran_choice.h), each distinct one once:
// a run prints one per call, so thousands of the same.
struct RanChoices {
  std::vector<NcclRanChoice> list;
  std::set<std::tuple<std::string, bool, std::size_t, std::string, std::string>> seen;
  void add(NcclRanChoice choice);
  void clear() { list.clear(), seen.clear(); }
};

// The version a library printed in a log line (nccl_tests_log_version.cc), where the line says one:
// NCCL's "NCCL version 2.26.2+cuda12.8" -> {"NCCL", "2.26.2+cuda12.8"}, RCCL's
// "RCCL version : 2.22.3-develop:f5b15f2" -> {"RCCL", "2.22.3-develop:f5b15f2"} (and its older
// forms); version "" for a version line whose word does not start with a digit (or is missing).
// nullopt for other lines, and for "NCCL version" mid-line (a WARN sentence).
struct LibraryVersion {
  std::string library;  // "NCCL" or "RCCL"
  std::string version;  // the word printed, shown() (bounded, printable)
};
std::optional<LibraryVersion> library_version(std::string_view line);

// The version codes a log may print: NCCL_VERSION_CODE's major x 10000 + minor x 100 + patch with
// a major of at most 99. 0 is a library that did not say (nccl-tests prints what ncclGetVersion
// gave).
inline constexpr unsigned long long kNcclVersionCodeLimit = 1000000;
// "2.26.2" of an NCCL_VERSION_CODE as nccl-tests prints it (nccl-library=22602, -J's
// nccl_version); one below 10000 is NCCL's code before 2.9 (2804 = 2.8.4). nullopt for 0 (not
// printed) and for a code at or past kNcclVersionCodeLimit (not a version: keep the text shown,
// so that nccl_version_pricing notes it).
std::optional<std::string> nccl_version_of_code(unsigned long long code);

// Calls `line(text, line_no, ended)` for each line of `text`, CRLF's '\r' taken off; `ended`: a
// line break ended it (the last line without one is not ended, unless its '\r' says it was).
// ConfigError naming `source` for a text over kNcclTestsMaxBytes or a line over
// kNcclTestsMaxLineBytes, in the words of `what`: {"an nccl-tests log", "nccl-tests output"}.
struct TextKind {
  std::string_view read_as, not_one;
};
void for_each_line(std::string_view text, std::string_view source, TextKind what,
                   const std::function<void(std::string_view, int, bool)>& line);

// Splits a line at spaces and tabs.
std::vector<std::string_view> split(std::string_view line);
// The lines of a log as its ranks printed them (nccl_tests_log_launcher.cc): Open MPI's
// "[1,0]<stdout>:" tags taken out wherever a write put them, a rank's line split by another
// rank's write joined again, srun's " 0: " label dropped. Feed it the log's lines in order, then
// finish(); `emit` gets each line with the log line it started on and whether a line break ended
// it (false: a rank's write left unfinished when its output stopped: ended when the same rank
// writes a '#' header, when any rank starts a new run, or at the end of the log); a line longer
// than kNcclTestsMaxLineBytes throws ConfigError.
class LauncherLines {
 public:
  static constexpr std::size_t kMaxUnfinishedLines = 4096;  // streams mid-line at once
  using Emit = std::function<void(std::string_view text, int line_no, bool ended)>;
  LauncherLines(std::string_view source, Emit emit) : source_(source), emit_(std::move(emit)) {}
  // `broken`: whether a line break ended the physical line (false for a log's cut last line).
  void add(std::string_view physical_line, int line_no, bool broken = true);
  void finish();  // the lines no line break ended (a log cut off mid-row)
  // "# nThread ...", "# Collective test starting: ...", "# nccl-tests version ...".
  static bool starts_run(std::string_view piece);

 private:
  // Emits the unfinished lines (of `stream` only, or all) in the order they started, not ended.
  void end_unfinished(std::optional<std::string_view> stream = std::nullopt);

  struct Partial {
    std::string text;
    int first_line = 0;
  };
  std::string_view source_;
  Emit emit_;
  // tag -> its stream's unfinished line; a stream's entry goes when a line break ends its line
  std::map<std::string, Partial, std::less<>> partial_;
};

// Rows NCCL's own debug lines were written into: with NCCL_DEBUG=INFO on the same stdout,
// nccl-tests' pieces of a row and NCCL's lines share one stdio buffer, so a line NCCL prints while
// a row is half written is glued to the piece ("  1048576  262144  float  sum  -1node0:77:77 [0]
// NCCL INFO AllReduce: ..."), and the row's next piece starts a later line (nccl_tests_log_glued.cc
// says how they are parted and joined). Only with the run's hosts known (its device block): NCCL's
// line starts with one ("host:pid:tid [dev] "), which is where the piece ends.
class GluedRows {
 public:
  struct Line {
    std::string text;
    int line_no = 0;
    bool ended = true;
  };
  void add_host(std::string_view host);
  void clear_hosts() { hosts_.clear(); }
  bool knows_hosts() const { return !hosts_.empty(); }
  // The lines to read in place of `text` (a line of the log, line `line_no`; `ended`: whether a
  // line break ended it).
  std::vector<Line> feed(std::string_view text, int line_no, bool ended);
  // A row whose pieces never ended (the log stopped, or a new run began), as an unended line.
  std::optional<Line> flush();

 private:
  // Where an NCCL debug line of one of the hosts starts in `text`; npos when none does.
  std::size_t nccl_line_at(std::string_view text) const;
  std::set<std::string, std::less<>> hosts_;
  std::string piece_;  // the row's pieces so far, joined with spaces
  int piece_line_ = 0;
};

// Which field of a row is what, from the column header (default: the 13-field layout).
struct Layout {
  int size = 0, count = 1, type = 2, redop = 3, root = 4;  // -1: no such column
  int leading = 5;
  struct Block {
    int fields = 4, time = 0, algbw = 1, busbw = 2, wrong = 3;
    // What the header says `wrong` is, by its name: "#wrong" a count nccl-tests prints with %g
    // (2022 on), "error" the float error it printed with %5.0le before; unknown without a header
    // or under another name. Their zeros, "0" and "0e+00", are whole fields (unended_row_cut).
    enum class Wrong { unknown, count, error } wrong_kind = Wrong::unknown;
  };
  std::vector<Block> blocks{Block{}, Block{}};
  bool timestamp = false;
  // Header words after the last block's #wrong column that nccl-tests does not print (e.g.
  // twinccl perf's algorithm/protocol): a row's extra tokens there are ignored.
  bool trailing = false;
  int fields() const {
    int n = 0;
    for (const Block& b : blocks) n += b.fields;
    return n;
  }
};

// The layout a column header line describes (its tokens after '#'), or nullopt for other lines.
std::optional<Layout> column_header(const std::vector<std::string_view>& tokens);

// One result row (a line whose first two fields are whole numbers, split) read with `layout`
// (nccl_tests_log_row.cc): hypercube's blank redop column filled in, every value checked.
// Throws ConfigError naming "<source>:<line_no>" and the line; `layout_line` is the column
// header's line, 0 = none seen (nccl-tests' current 13-column layout).
NcclTestsRow read_row(const std::vector<std::string_view>& tokens, const Layout& layout,
                      int layout_line, std::string_view source, int line_no, std::string_view line);
// Whether the last of a row's tokens is a value `layout` reads (its last block's last field, read
// by read_row) rather than a column after the values (a timestamp, another tool's words).
bool ends_in_value(const std::vector<std::string_view>& tokens, const Layout& layout);
// Why a row that no line break ended (a log's cut last line, a rank's line its output left
// unfinished) is not read, for the table's `skipped`; nullopt when it is provably whole: all of
// the layout's fields (out-of-place too) and a last field that cannot be a piece of a longer one
// (nccl_tests_log_row.cc says which).
std::optional<std::string> unended_row_cut(const std::vector<std::string_view>& tokens,
                                           const Layout& layout, int layout_line,
                                           std::string_view source, int line_no,
                                           std::string_view line);

}  // namespace twinccl::sim::nccl_tests
