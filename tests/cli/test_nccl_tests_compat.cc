// `twinccl perf` as a drop-in for nccl-tests: every nccl-tests flag is accepted (the ones without
// meaning here named in the header), a typical nccl-tests script line runs unchanged, and the
// output has the structure of real nccl-tests output (tests/fidelity/logs, verbatim published
// logs): the same header and footer lines, the same column positions, and it parses with the same
// parser (parse_nccl_tests_output / parse_nccl_tests_json) into the same columns and collectives.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_runner.h"
#include "twinccl/sim/nccl_tests_log.h"

using Catch::Matchers::Contains;
using twinccl_test::fields;
using twinccl_test::run_cli;

namespace {

std::string log_dir() {
  auto dir = std::filesystem::path(__FILE__).parent_path() / ".." / "fidelity" / "logs";
  for (auto p = std::filesystem::current_path();
       !std::filesystem::exists(dir) && p != p.parent_path(); p = p.parent_path()) {
    dir = p / "tests" / "fidelity" / "logs";
  }
  return dir.string();
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Where each whitespace-separated field of a row ends: nccl-tests right-aligns every column.
std::vector<std::size_t> field_ends(const std::string& line, std::size_t n) {
  std::vector<std::size_t> ends;
  for (std::size_t i = 0; i < line.size() && ends.size() < n; ++i) {
    if (line[i] != ' ' && (i + 1 == line.size() || line[i + 1] == ' ')) ends.push_back(i);
  }
  return ends;
}

bool is_row(const std::string& line) {
  return std::regex_search(line, std::regex(R"(^ *\d+ +\d+ +[a-z])"));
}

// The kinds of line nccl-tests prints, as patterns both real logs and twinccl's output must match.
const std::regex kNThread(
    R"(^# nThread \d+ nGpus \d+ minBytes \d+ maxBytes \d+ step: \d+\((factor|bytes)\) warmup iters: \d+ iters: \d+ agg iters: \d+ validation: \d+ graph: \d+( unalign: \d+)?$)");
const std::regex kDevice(
    R"(^#  Rank +\d+ Group +\d+ Pid +\d+ on +\S+ device +\d+ \[[0-9a-fx:]+\] .+$)");
const std::regex kOutOfBounds(R"(^# Out of bounds values : \d+ (OK|FAILED)$)");
const std::regex kAverage(R"(^# Avg bus bandwidth    : [0-9.e+-]+ ?$)");

int count_matching(const std::vector<std::string>& lines, const std::regex& re) {
  int n = 0;
  for (const std::string& l : lines) n += std::regex_match(l, re) ? 1 : 0;
  return n;
}

const char* kRealLog = "a100-sxm4-80gb-1node-all_reduce-g8.log";

}  // namespace

TEST_CASE("perf accepts every nccl-tests flag, those without meaning here are named in the header",
          "[cli][nccl-tests]") {
  const std::vector<std::pair<std::string, std::string>> ignored{
      {"-p 1", "-p 1 (parallel init)"},
      {"-z 1", "-z 1 (blocking"},
      {"-y 1", "-y 1"},
      {"-T 10", "-T 10"},
      {"-G 1", "-G 1 (CUDA graphs)"},
      {"-R 1", "-R 1 (buffer registration)"},
      {"-x 1", "-x 1"},
      {"-D 1", "-D 1"},
      {"-V 16", "-V 16"},
      {"-M 1", "-M 1"},
      {"-u 1", "-u 1"},
      {"-I 1", "-I 1"},
      {"-K 1", "-K 1"},
      {"--parallel_init 1", "-p 1"},
      {"--cudagraph 2", "-G 2"},
      {"--local_register 2", "-R 2"}};
  for (const auto& [flag, note] : ignored) {
    INFO(flag);
    auto r = run_cli("perf all_reduce -b 1K -e 4K -c 0 " + flag);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("# ignored here (no meaning on an emulator or simulator): " + note));
  }
  for (std::string flag : {"-t 1",
                           "-g 8",
                           "-m 2",
                           "-N 2",
                           "-c 3",
                           "-a 0",
                           "-a 2",
                           "-C 1",
                           "-S 1",
                           "-o mulsum",
                           "-d bfloat16",
                           "-r 0",
                           "-w 5",
                           "-n 20",
                           "--nthreads 1",
                           "--ngpus 4",
                           "--agg_iters 2",
                           "--run_cycles 1",
                           "--average 3",
                           "--report_cputime 0",
                           "--report_timestamps 0"}) {
    INFO(flag);
    auto r = run_cli("perf all_reduce -b 1K -e 4K --check-max 64K " + flag);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, !Contains("ignored here"));
  }
  for (std::string bad :
       {"-G x", "-z 4", "-V 129", "-a 4", "-N 0", "-m 0", "-t 0", "-g 9", "-C 2", "-S yes"}) {
    INFO(bad);
    auto r = run_cli("perf all_reduce -b 1K -e 4K -c 0 " + bad);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.out, Contains(fields(bad)[0]));
  }
}

TEST_CASE("a typical nccl-tests script line runs unchanged", "[cli][nccl-tests]") {
  // all_reduce_perf -b 8 -e 8G -f 2 -g 8 -c 1 -n 20 -w 5
  auto r = run_cli("perf all_reduce -b 8 -e 8G -f 2 -g 8 -c 1 -n 20 -w 5", "", 280);
  REQUIRE(r.exit_code == 0);
  auto lines = lines_of(r.out);
  CHECK(count_matching(lines, kNThread) == 1);
  CHECK_THAT(
      r.out,
      Contains("# nThread 1 nGpus 8 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 "
               "iters: 20 agg iters: 1 validation: 1 graph: 0"));
  CHECK(count_matching(lines, kDevice) == 8);
  int rows = 0;
  for (const auto& l : lines) rows += is_row(l) ? 1 : 0;
  CHECK(rows == 31);  // 8 B .. 8 GiB by factor 2
  CHECK_THAT(r.out, Contains("# Out of bounds values : 0 OK"));
}

TEST_CASE("perf output has the structure of real nccl-tests output, line for line",
          "[cli][nccl-tests]") {
  const std::string real = read_text(log_dir() + "/" + kRealLog);
  REQUIRE(!real.empty());
  auto ours = run_cli("perf all_reduce -b 8 -e 4G -f 2 -g 8 -c 0 -n 20 -w 5 --plain");
  REQUIRE(ours.exit_code == 0);
  const auto real_lines = lines_of(real), our_lines = lines_of(ours.out);
  for (const auto* lines : {&real_lines, &our_lines}) {
    CHECK(count_matching(*lines, kNThread) == 1);
    CHECK(count_matching(*lines, kDevice) == 8);
    CHECK(count_matching(*lines, kOutOfBounds) == 1);
    CHECK(count_matching(*lines, kAverage) == 1);
    CHECK(std::count(lines->begin(), lines->end(), "# Using devices") == 1);
  }
  CHECK(std::count(our_lines.begin(), our_lines.end(),
                   "# Collective test starting: all_reduce_perf") == 1);
  CHECK(std::count(our_lines.begin(), our_lines.end(),
                   "# Collective test concluded: all_reduce_perf") == 1);
  // The same rows, column for column: sizes, counts, type, redop, root, and every column
  // right-aligned at the same character as nccl-tests prints it. The published logs predate
  // nccl-tests 2.17, which widened #wrong by one character ("  %6g" for "  %5g"); twinccl prints
  // today's nccl-tests layout.
  std::vector<std::string> real_rows, our_rows;
  for (const auto& l : real_lines)
    if (is_row(l)) real_rows.push_back(l);
  for (const auto& l : our_lines)
    if (is_row(l)) our_rows.push_back(l);
  REQUIRE(real_rows.size() == our_rows.size());
  for (std::size_t i = 0; i < real_rows.size(); ++i) {
    INFO(real_rows[i] << "\n" << our_rows[i]);
    auto rf = fields(real_rows[i]), of = fields(our_rows[i]);
    REQUIRE(of.size() == 13);
    for (int f = 0; f < 5; ++f) CHECK(rf[f] == of[f]);
    std::vector<std::size_t> want = field_ends(real_rows[i], 13);
    for (std::size_t f = 8; f < want.size(); ++f) want[f] += f < 12 ? 1 : 2;  // the wider #wrong
    CHECK(field_ends(our_rows[i], 13) == want);
  }
  // The column header names the same columns in the same places (up to "#wrong", which nccl-tests
  // 2.17 moved one character right).
  auto header_of = [](const std::vector<std::string>& ls) {
    for (const auto& l : ls)
      if (l.rfind("#       size", 0) == 0) return l;
    return std::string();
  };
  CHECK(fields(header_of(real_lines)) == fields(header_of(our_lines)));
  CHECK(header_of(real_lines).substr(0, 77) == header_of(our_lines).substr(0, 77));
  // And the same parser reads both the same way.
  auto real_tables = twinccl::sim::parse_nccl_tests_output(real, kRealLog);
  auto our_tables = twinccl::sim::parse_nccl_tests_output(ours.out, "twinccl-perf.log");
  REQUIRE(real_tables.size() == 1);
  REQUIRE(our_tables.size() == 1);
  const auto &a = real_tables[0], &b = our_tables[0];
  CHECK(b.collective == a.collective);
  CHECK(b.collective_from == "test-starting line");
  CHECK(b.ranks == a.ranks);
  CHECK(b.nodes == a.nodes);
  CHECK(b.complete);
  CHECK(b.rows.size() == a.rows.size());
  for (std::size_t i = 0; i < b.rows.size() && i < a.rows.size(); ++i) {
    CHECK(b.rows[i].size_bytes == a.rows[i].size_bytes);
    CHECK(b.rows[i].count == a.rows[i].count);
    CHECK(b.rows[i].dtype == a.rows[i].dtype);
    CHECK(b.rows[i].redop == a.rows[i].redop);
    CHECK(b.rows[i].root == a.rows[i].root);
    CHECK(b.rows[i].out_of_place.has_value());
    CHECK(b.rows[i].in_place.has_value());
  }
}

TEST_CASE(
    "perf: one table per collective, each parsed as its nccl-tests program, extra columns trail",
    "[cli][nccl-tests]") {
  auto plain = run_cli(
      "perf all_reduce all_gather alltoall reduce_scatter broadcast -b 1K -e 1M -f 4 -c 0 --plain");
  REQUIRE(plain.exit_code == 0);
  auto tables = twinccl::sim::parse_nccl_tests_output(plain.out, "twinccl-perf.log");
  REQUIRE(tables.size() == 5);
  std::vector<std::string> names;
  for (const auto& t : tables) names.push_back(t.collective);
  CHECK(names == std::vector<std::string>{"all_reduce", "all_gather", "all_to_all",
                                          "reduce_scatter", "broadcast"});
  for (const auto& t : tables) {
    CHECK(t.ranks == 8);
    for (const auto& row : t.rows) {  // per-rank counts for the gathered collectives, as nccl-tests
      std::size_t per = t.collective == "all_reduce" || t.collective == "broadcast" ? 1 : 8;
      CHECK(row.size_bytes == row.count * 4 * per);
    }
  }
  // The default output adds algorithm/protocol after nccl-tests' thirteen fields, nothing else.
  auto full =
      run_cli("perf all_reduce all_gather alltoall reduce_scatter broadcast -b 1K -e 1M -f 4 -c 0");
  REQUIRE(full.exit_code == 0);
  std::vector<std::string> plain_rows, full_rows;
  for (const auto& l : lines_of(plain.out))
    if (is_row(l)) plain_rows.push_back(l);
  for (const auto& l : lines_of(full.out))
    if (is_row(l)) full_rows.push_back(l);
  REQUIRE(plain_rows.size() == full_rows.size());
  for (std::size_t i = 0; i < plain_rows.size(); ++i) {
    CHECK(full_rows[i].rfind(plain_rows[i], 0) == 0);
    CHECK(fields(full_rows[i]).size() == 14);
  }
  // ...and parses with the same code as nccl-tests' own output, to the same rows.
  auto full_tables = twinccl::sim::parse_nccl_tests_output(full.out, "twinccl-perf-full.log");
  REQUIRE(full_tables.size() == tables.size());
  for (std::size_t t = 0; t < tables.size(); ++t) {
    CHECK(full_tables[t].collective == tables[t].collective);
    REQUIRE(full_tables[t].rows.size() == tables[t].rows.size());
    for (std::size_t i = 0; i < tables[t].rows.size(); ++i) {
      CHECK(full_tables[t].rows[i].size_bytes == tables[t].rows[i].size_bytes);
      CHECK(full_tables[t].rows[i].out_of_place->time_us ==
            tables[t].rows[i].out_of_place->time_us);
      CHECK(full_tables[t].rows[i].in_place->busbw_gbps == tables[t].rows[i].in_place->busbw_gbps);
    }
  }
}

TEST_CASE("perf -J writes nccl-tests' JSON (schema v3) that its parser reads like the table",
          "[cli][nccl-tests]") {
  const std::string path = "nccl_tests_compat_" + std::to_string(::getpid()) + ".json";
  auto r = run_cli("perf all_gather -b 1K -e 1M -f 4 -g 4 -c 0 -d half -J " + path);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("# Writing JSON output to " + path));
  const std::string text = read_text(path);
  std::remove(path.c_str());
  auto j = nlohmann::json::parse(text);
  CHECK(j["version"] == 3);
  for (const char* key : {"start_time", "end_time", "args", "env", "nccl_version", "config",
                          "results", "out_of_bounds", "average_bus_bandwidth", "errors"}) {
    CHECK(j.contains(key));
  }
  CHECK(j["args"][0] == "all_gather_perf");
  for (const char* key :
       {"nthreads", "ngpus", "minimum_bytes", "maximum_bytes", "step_factor", "warmup_iters",
        "iterations", "aggregated_iterations", "validation", "graph", "blocking_collectives",
        "per_iter_timing", "per_iter_skip", "parallel_init", "devices"}) {
    CHECK(j["config"].contains(key));
  }
  CHECK(j["config"]["ngpus"] == 4);
  REQUIRE(j["config"]["devices"].size() == 4);
  for (const char* key :
       {"rank", "group", "pid", "hostname", "device", "device_hex", "device_info"}) {
    CHECK(j["config"]["devices"][0].contains(key));
  }
  REQUIRE(j["results"].size() == 6);
  const auto& row = j["results"][0];
  CHECK(row["type"] == "half");
  CHECK(row["redop"] == "none");
  CHECK(row["root"] == "    -1");
  for (const char* key : {"time", "alg_bw", "bus_bw", "nwrong"})
    CHECK(row["out_of_place"].contains(key));
  CHECK(row["out_of_place"]["nwrong"].is_null());
  CHECK(j["out_of_bounds"]["count"] == 0);
  CHECK(j["average_bus_bandwidth"]["okay"] == "unchecked");
  auto from_json = twinccl::sim::parse_nccl_tests_json(text, path);
  auto from_table = twinccl::sim::parse_nccl_tests_output(
      run_cli("perf all_gather -b 1K -e 1M -f 4 -g 4 -c 0 -d half --plain").out, "table.log");
  REQUIRE(from_json.size() == 1);
  REQUIRE(from_table.size() == 1);
  CHECK(from_json[0].collective == "all_gather");
  CHECK(from_json[0].collective_from == "program name");
  CHECK(from_json[0].ranks == 4);
  REQUIRE(from_json[0].rows.size() == from_table[0].rows.size());
  for (std::size_t i = 0; i < from_json[0].rows.size(); ++i) {
    CHECK(from_json[0].rows[i].size_bytes == from_table[0].rows[i].size_bytes);
    CHECK(from_json[0].rows[i].count == from_table[0].rows[i].count);
    CHECK(from_json[0].rows[i].out_of_place->busbw_gbps ==
          Approx(from_table[0].rows[i].out_of_place->busbw_gbps).margin(0.01));
  }
}
