// The nccl-tests stdout parser.
//
// How it works: the text is read line by line (each at most kNcclTestsMaxLineBytes, a trailing
// '\r' dropped), as its ranks printed them: srun's " 0: " label dropped, Open MPI's
// "[1,0]<stdout>:" tags taken out wherever a write put them and a row that another rank's write
// split joined again (nccl_tests_log_launcher.cc). Lines starting with '#'
// are headers: "# Collective test starting: X_perf" and "# nThread ..." begin a new run, the
// "# Using devices" block gives one line per rank with its hostname (ranks = lines, nodes =
// distinct hosts; a "..." line marks it truncated), "# nccl-tests version ... nccl-library=N" and
// the library's own "NCCL version X" or RCCL's "RCCL version : X" give the version
// (nccl_tests_log_version.cc), and the column header ("size count type redop
// root time algbw busbw #wrong time ...") gives the layout: which leading columns there are and
// how many values each timed block has (4, or 8 with per-iteration columns). A line whose first
// two fields are whole numbers is a row, read with that layout (nccl_tests_log_row.cc); a line that
// looks like a row but whose size or count is not a whole number ("1P", "-16") is not read and is
// listed with its line and why in the table's `skipped`; anything else is noise (Open MPI help
// messages, "Run-1 Starting command", a failure line) except a "<name>_perf" program name, which
// names the collective. A row no line break ended (the log's last line, a rank's line its output
// left unfinished) is read only when provably whole, else listed as skipped (unended_row_cut).
// A table ends at the footer, at a new run, or at a new column header after rows. For example:
//
//   #       size    count   type  redop  root    time  algbw  busbw #wrong    time  algbw  busbw
//   #wrong
//            8        2    float    sum    -1   40.12   0.00   0.00      0   38.85   0.00   0.00 0
//        -> size 8, count 2, float, sum, root -1, out-of-place 40.12 us, in-place 38.85 us
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "nccl_tests_log_parts.h"
#include "twinccl/errors.h"

namespace twinccl::sim {
namespace {

using nccl_tests::fail;
using nccl_tests::Layout;
using nccl_tests::split;

struct Reader {
  Reader(std::string_view source_name, const NcclTestsParseOptions& parse_options)
      : source(source_name), options(parse_options) {}
  std::string_view source;
  const NcclTestsParseOptions& options;
  std::vector<NcclTestsTable> tables;
  std::size_t total_rows = 0;
  // The run being read: what its header said so far.
  nccl_tests::TableHints hints;
  std::map<int, std::string> devices;  // rank -> hostname
  std::map<int, int> device_lines;     // rank -> its line
  bool in_device_block = false;
  // A table opened or closed since the last device line: the next device line starts a new run's
  // block (two runs pasted together without their headers).
  bool devices_ended = false;
  std::string version;
  std::string library = "NCCL";  // whose `version` it is: "NCCL" or "RCCL"
  int version_line = 0;          // the line that gave `version`
  nccl_tests::NcclEnv nccl_env;  // NCCL_ALGO / NCCL_PROTO as the log last said them
  nccl_tests::RanChoices ran;    // NCCL's per-call choices of the run (nccl_ran_choice.h)
  nccl_tests::GluedRows glued;   // NCCL's lines written into rows, parted (its hosts: the run's)
  Layout layout;
  int layout_line = 0;  // 0: no column header seen (default layout)
  std::optional<NcclTestsTable> open;
  std::vector<NcclTestsSkippedLine> pending;  // skipped before the next table's first row

  void skip(int line_no, std::string why) {
    if (++total_rows > kNcclTestsMaxRows) {
      fail(source, line_no,
           fmt::format("more than {} result rows; not one nccl-tests log", kNcclTestsMaxRows));
    }
    (open ? open->skipped : pending).push_back({line_no, std::move(why)});
  }

  void close_table(bool complete) {
    if (!open) return;
    open->complete = complete;
    nccl_tests::TableHints h = hints;
    std::set<std::string> hosts;
    int expected_rank = 0;
    for (const auto& [rank, host] : devices) {
      if (rank != expected_rank++) h.devices_truncated = true;
      hosts.insert(host);
    }
    h.device_ranks = static_cast<int>(devices.size());
    h.device_nodes = static_cast<int>(hosts.size());
    if (devices.empty()) h.devices_truncated = true;
    nccl_tests::finish_table(*open, h, options);
    apply_nccl_ran_choices(*open, ran.list);
    tables.push_back(std::move(*open));
    open.reset();
    devices_ended = true;
  }

  void new_run() {
    close_table(false);
    ran.clear();
    glued.clear_hosts();
    devices.clear();
    device_lines.clear();
    hints.devices_truncated = false;
    hints.gpu_name.clear();
    in_device_block = false;
    devices_ended = false;
  }

  // "#  Rank  0 Group  0 Pid  54740 on     thanos device  0 [0x07] NVIDIA A100-SXM4-80GB"
  bool device_line(const std::vector<std::string_view>& t, int line_no, std::string_view line) {
    if (t.size() < 5 || t[0] != "Rank") return false;
    const auto rank = nccl_tests::parse_integer(t[1]);
    auto on = std::find(t.begin(), t.end(), std::string_view("on"));
    if (on == t.end() || on + 2 >= t.end() || *(on + 2) != "device") return false;
    if (!rank || *rank < 0 || *rank >= kNcclTestsMaxRanks) {
      fail(source, line_no,
           fmt::format("a device line with a bad rank (not 0..{})", kNcclTestsMaxRanks - 1), line);
    }
    if (devices.size() >= static_cast<std::size_t>(kNcclTestsMaxRanks))
      fail(source, line_no, fmt::format("more than {} device lines", kNcclTestsMaxRanks), line);
    if (devices_ended) {  // a device line after a table: the next run's block
      new_run();
      in_device_block = true;
    }
    const auto [at, first] = device_lines.emplace(static_cast<int>(*rank), line_no);
    if (!first) {  // read once, it made the ranks one fewer and the nodes maybe wrong
      // Each process of a run without MPI is a world of its own and prints its device block:
      // NVIDIA/nccl-tests issues #213, #254.
      fail(source, line_no,
           fmt::format("every process printed rank {}: nccl-tests ran without MPI (built without "
                       "MPI=1 or not started by mpirun); rank {} is at {}:{} and {}:{}",
                       *rank, *rank, source, at->second, source, line_no),
           line);
    }
    devices[static_cast<int>(*rank)] = std::string(*(on + 1));
    glued.add_host(*(on + 1));
    if (hints.gpu_name.empty()) {  // "device 0 [0x07] NVIDIA A100-SXM4-80GB": after the bus id
      // "device" was found before the end; its number and the bus id may be missing.
      auto name = t.end() - on > 4 ? on + 4 : t.end();
      if (name != t.end() && name->front() == '[') ++name;
      for (; name != t.end() && hints.gpu_name.size() < 80; ++name)
        hints.gpu_name += (hints.gpu_name.empty() ? "" : " ") + nccl_tests::shown(*name, 40);
    }
    return true;
  }

  void header_line(std::string_view body, int line_no, std::string_view line) {
    const std::vector<std::string_view> t = split(body);
    if (body.rfind("Collective test starting:", 0) == 0) {
      new_run();
      hints.gpus_per_thread = 0;
      hints.from_start_line = t.size() >= 4 ? nccl_tests::collective_named(t[3]) : std::nullopt;
      if (!hints.from_start_line) fail(source, line_no, "an unknown nccl-tests program", line);
    } else if (body.rfind("Collective test concluded:", 0) == 0) {
      close_table(open && open->complete);
    } else if (!t.empty() && t[0] == "nThread") {
      new_run();
      // "nThread 1 nGpus 8 minBytes ...": nGpus is the GPUs each thread drives (-g), an integer
      // (nccl-tests v2.19.6 src/util.cu:625).
      const bool said = t.size() >= 4 && t[2] == "nGpus";
      const auto gpus = said ? nccl_tests::parse_integer(t[3]) : std::nullopt;
      // Out of range, it was read as "not said": -g 1.
      if (said && (!gpus || *gpus < 1 || *gpus > kNcclTestsMaxGpusPerThread)) {
        fail(source, line_no,
             fmt::format("nGpus '{}' is not a number of GPUs per thread in 1..{}",
                         nccl_tests::shown(t[3], 20), kNcclTestsMaxGpusPerThread),
             line);
      }
      hints.gpus_per_thread = gpus ? static_cast<int>(*gpus) : 0;
    } else if (body.rfind("Using devices", 0) == 0) {
      new_run();
      in_device_block = true;
    } else if (body.rfind("nccl-tests version", 0) == 0) {
      const std::size_t at = body.find("nccl-library=");
      const std::vector<std::string_view> rest =
          at == std::string_view::npos ? t : split(body.substr(at + 13));
      if (at != std::string_view::npos && !rest.empty()) {
        // A code (0: the library did not say) or, unusable, the text as shown: its rows then get
        // nccl_version_pricing's note rather than the newest model silently.
        const auto code = nccl_tests::parse_unsigned(rest.front());
        const std::optional<std::string> name =
            code ? nccl_tests::nccl_version_of_code(*code) : std::nullopt;
        if (name || !code || *code != 0) {
          version = name ? *name : nccl_tests::shown(rest.front(), 40);
          library = "NCCL";
          version_line = line_no;
        }
      }
    } else if (body.rfind("Avg bus bandwidth", 0) == 0) {
      if (open) open->complete = true;
      close_table(true);
    } else if (device_line(t, line_no, line)) {
    } else if (in_device_block && body.rfind("...", 0) == 0) {
      hints.devices_truncated = true;
    } else if (std::optional<Layout> l = nccl_tests::column_header(t)) {
      if (open && !open->rows.empty()) close_table(false);
      layout = *l;
      layout_line = line_no;
      in_device_block = false;
      devices_ended = !devices.empty();
    } else if (auto program = nccl_tests::collective_of_program(body);
               program && !hints.from_start_line) {
      hints.from_program = program;
    }
  }

  void row(const std::vector<std::string_view>& tokens, int line_no, std::string_view line) {
    if (++total_rows > kNcclTestsMaxRows) {
      fail(source, line_no,
           fmt::format("more than {} result rows; not one nccl-tests log", kNcclTestsMaxRows));
    }
    NcclTestsRow r = nccl_tests::read_row(tokens, layout, layout_line, source, line_no, line);
    if (!open) {
      open.emplace();
      open->source = std::string(source);
      open->first_line = line_no;
      open->nccl_version = version;
      open->nccl_version_library = library;
      open->nccl_version_line = version_line;
      nccl_env.apply(*open);
      open->skipped = std::move(pending);
      pending.clear();
    }
    open->rows.push_back(std::move(r));
  }

  // One line as its rank printed it (launcher tags and labels taken out: LauncherLines); `ended`
  // is false for a rank's last write that no line break ended (its output stopped mid-line).
  // NCCL's own debug lines written into a row are parted from it first (GluedRows).
  void line(std::string_view raw, int line_no, bool ended = true) {
    if (!glued.knows_hosts()) {
      read_line(raw, line_no, ended);
      return;
    }
    std::string_view text = raw;
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    for (const nccl_tests::GluedRows::Line& l : glued.feed(text, line_no, ended))
      read_line(l.text, l.line_no, l.ended);
  }

  // The end of the log: a row NCCL's lines were written into whose last piece never came.
  void finish() {
    if (std::optional<nccl_tests::GluedRows::Line> cut = glued.flush())
      read_line(cut->text, cut->line_no, cut->ended);
    close_table(false);
  }

  void read_line(std::string_view raw, int line_no, bool ended) {
    std::string_view text = raw;
    while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
    if (text.empty()) return;
    nccl_env.read(text, line_no);
    if (auto choice = nccl_ran_choice(text, source, line_no)) {
      ran.add(std::move(*choice));
      return;
    }
    if (std::optional<nccl_tests::LibraryVersion> v = nccl_tests::library_version(text)) {
      if (!v->version.empty()) {
        version = std::move(v->version);
        library = std::move(v->library);
        version_line = line_no;
      }
      return;
    }
    if (text.front() == '#') {
      std::string_view body = text.substr(1);
      while (!body.empty() && (body.front() == ' ' || body.front() == '\t')) body.remove_prefix(1);
      header_line(body, line_no, raw);
      return;
    }
    const std::vector<std::string_view> t = split(text);
    auto all_digits = [](std::string_view v) {
      return v.find_first_not_of("0123456789") == std::string_view::npos;
    };
    if (t.size() >= 2 && all_digits(t[0]) && all_digits(t[1])) {
      if (!ended) {  // the run stopped (or the log was cut) in this row, maybe inside a field
        if (std::optional<std::string> why =
                nccl_tests::unended_row_cut(t, layout, layout_line, source, line_no, raw)) {
          skip(line_no, std::move(*why));
          return;
        }
      }
      row(t, line_no, raw);
    } else if (std::optional<std::string> why = nccl_tests::unreadable_row(t)) {
      skip(line_no, std::move(*why));
    } else if (device_line(t, line_no, raw)) {  // copies that dropped the leading '#'
    } else if (in_device_block && text.rfind("...", 0) == 0) {
      hints.devices_truncated = true;
    } else if (auto program = nccl_tests::collective_of_program(text);
               program && !hints.from_start_line) {
      hints.from_program = program;
    }
  }
};

}  // namespace

std::vector<NcclTestsTable> parse_nccl_tests_output(std::string_view text, std::string_view source,
                                                    const NcclTestsParseOptions& options) {
  Reader reader(source, options);
  nccl_tests::LauncherLines lines(source,
                                  [&reader](std::string_view line, int line_no, bool ended) {
                                    reader.line(line, line_no, ended);
                                  });
  nccl_tests::for_each_line(text, source, {"an nccl-tests log", "nccl-tests output"},
                            [&lines](std::string_view line, int line_no, bool ended) {
                              lines.add(line, line_no, ended);
                            });
  lines.finish();
  reader.finish();
  const std::vector<NcclTestsSkippedLine>& left = reader.pending;
  if (reader.tables.empty() && !left.empty()) nccl_tests::fail_no_row_read(source, left);
  if (reader.tables.empty()) {
    nccl_tests::fail(
        source, 0,
        "no nccl-tests result rows found (rows look like '  8  2  float  sum  -1  40.12  0.00 "
        "0.00  0  38.85  0.00  0.00  0'); is this nccl-tests' output?");
  }
  std::vector<NcclTestsSkippedLine>& last = reader.tables.back().skipped;
  last.insert(last.end(), left.begin(), left.end());
  return reader.tables;
}

std::vector<NcclTestsTable> parse_nccl_tests_file_text(std::string_view text,
                                                       std::string_view source,
                                                       const NcclTestsParseOptions& options) {
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{')
    return parse_nccl_tests_json(text, source, options);
  return parse_nccl_tests_output(text, source, options);
}

}  // namespace twinccl::sim
