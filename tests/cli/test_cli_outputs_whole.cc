// Every output whole or refused (issue 25): each case a careless user or script hit ends with exit
// 0 and a correct output, or exit 1/2 with one line naming what, where and which value, and leaves
// no file behind. The comment on each says what the old code did.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli_runner.h"
#include "twinccl/utf8_text.h"

using Catch::Matchers::Contains;
using twinccl_test::CliResult;
using twinccl_test::run_cli;
using twinccl_test::ScratchDir;

namespace {

namespace fs = std::filesystem;

std::size_t entries(const fs::path& folder) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(folder)) ++n;
  return n;
}

std::string read(const std::string& path) {
  std::stringstream s;
  s << std::ifstream(path).rdbuf();
  return s.str();
}

// Exit `code` with one line of output holding every needle.
void require_one_line(const CliResult& r, int code, const std::vector<std::string>& needles) {
  INFO(r.out);
  CHECK(r.exit_code == code);
  for (const std::string& n : needles) CHECK_THAT(r.out, Contains(n));
  CHECK(r.out.find('\n') == r.out.size() - 1);
}

const std::string kTrace =
    std::string(TWINCCL_SOURCE_DIR) + "/fuzz/corpus/trace_json/quickstart_4ranks.json";
const std::string kLog = std::string(TWINCCL_SOURCE_DIR) +
                         "/tests/fidelity/logs/a100-sxm4-80gb-1node-all_reduce-mpi8.log";

// An executable `gnuplot` in its own folder, to put first on PATH.
std::string fake_gnuplot(const ScratchDir& d, const std::string& body) {
  fs::create_directories(d.path("bin"));
  const std::string file = d.path("bin/gnuplot");
  std::ofstream(file) << "#!/bin/sh\n" << body << "\n";
  ::chmod(file.c_str(), 0755);
  return "PATH=" + d.path("bin") + ":\"$PATH\"";
}

}  // namespace

TEST_CASE("perf --trace /dev/full with several collectives: an error, no file beside the device",
          "[cli][outputs]") {
  // Before: exit 0, and /dev/full.all_reduce.float32 ... created as regular files in /dev.
  const CliResult r = run_cli("perf all_reduce all_gather -b 1M -e 1M -c 0 --trace /dev/full");
  INFO(r.out);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.out, Contains("--trace '/dev/full'") && Contains("No space left on device"));
  for (const char* stray : {"/dev/full.all_reduce.float32", "/dev/full.all_gather.float32"}) {
    CHECK_FALSE(fs::exists(stray));
    if (fs::is_regular_file(stray)) fs::remove(stray);  // what a failing build leaves in /dev
  }
}

TEST_CASE("replay --trace with a topology given twice writes both timelines", "[cli][outputs]") {
  // Before: one file, the second replay's timeline over the first.
  const ScratchDir d("twinccl-outputs-replay");
  const CliResult r =
      run_cli("replay " + kTrace + " -t dgx-h100 -t dgx-h100 --trace " + d.path("t.json"));
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK(fs::file_size(d.path("t.dgx-h100.json")) > 100);
  CHECK(fs::file_size(d.path("t.dgx-h100.2.json")) > 100);
  CHECK(entries(d.dir) == 2);
}

TEST_CASE("perf -J with bytes that are not UTF-8 writes valid JSON with them escaped",
          "[cli][outputs][utf8]") {
  // Before: exit 1, "[json.exception.type_error.316] invalid UTF-8 byte", no file.
  const ScratchDir d("twinccl-outputs-utf8");
  const std::string latin1_name = d.path("caf") + "\xe9.json";
  const CliResult r =
      run_cli("perf all_reduce -b 1M -e 1M -c 0 -J \"$(printf '" + d.path("caf") + "\\351.json')\"",
              "NCCL_DEBUG_FILE=\"$(printf '/tmp/nccl-caf\\351.log')\"");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  const std::string text = read(latin1_name);
  CHECK(twinccl::is_valid_utf8(text));
  const nlohmann::json j = nlohmann::json::parse(text);
  CHECK_THAT(j.dump(), Contains("nccl-caf\\\\xe9.log"));  // the variable, escaped
  CHECK_THAT(j.dump(), Contains("caf\\\\xe9.json"));      // the -J argument, escaped
  CHECK(entries(d.dir) == 1);
}

TEST_CASE("whatif --plot: a gnuplot that never ends is stopped at the deadline", "[cli][outputs]") {
  // Before: whatif waited for gnuplot forever.
  const ScratchDir d("twinccl-outputs-hang");
  const std::string path = fake_gnuplot(d, "exec sleep 600");
  fs::create_directories(d.path("out"));
  const CliResult r = run_cli("whatif -t dgx-h100 -b 1M -e 1M --plot " + d.path("out/p.svg"),
                              path + " TWINCCL_PLOT_TIMEOUT_S=0.5", 30);
  INFO(r.out);
  CHECK(r.exit_code == 1);
  CHECK_THAT(r.out, Contains("--plot '" + d.path("out/p.svg") + "'") &&
                        Contains("did not finish within 0.5 s"));
  CHECK(r.seconds < 20);
  CHECK(fs::is_empty(d.path("out")));  // no temporary file left
}

TEST_CASE("whatif --plot: a file name with a control byte gets the plot, no hidden file",
          "[cli][outputs]") {
  // Before: gnuplot dropped the byte from the temporary name, so it drew into another hidden file;
  // whatif said "gnuplot wrote no file there" (exit 2) and left that file behind.
  const ScratchDir d("twinccl-outputs-ctl");
  // A gnuplot that writes "drawn" to the file its script names in `set output '...'`.
  const std::string path = fake_gnuplot(
      d,
      "while IFS= read -r line; do case \"$line\" in \"set output '\"*) f=${line#set output "
      "\\'}; f=${f%\\'}; echo drawn > \"$f\";; esac; done");
  fs::create_directories(d.path("out"));
  const CliResult r = run_cli(
      "whatif -t dgx-h100 -b 1M -e 1M --plot \"$(printf '" + d.path("out/a") + "\\001b.svg')\"",
      path);
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK(read(d.path("out/a") + "\x01" + "b.svg") == "drawn\n");
  CHECK(entries(d.path("out")) == 1);  // the plot alone: no hidden file beside it
}

TEST_CASE("compare refuses a row whose count contradicts its size, naming file:line",
          "[cli][outputs][compare]") {
  // Before: the row was compared as 7 elements (-82.8%, exit 0).
  const ScratchDir d("twinccl-outputs-compare");
  std::string log = read(kLog);
  const std::string row = "     1048576        262144     float";
  REQUIRE(log.find(row) != std::string::npos);
  const std::size_t line =
      1 + static_cast<std::size_t>(std::count(log.begin(), log.begin() + log.find(row), '\n'));
  log.replace(log.find(row), row.size(), "     1048576             7     float");
  d.write("bad.log", log);
  // (Without --collective the row's shape already makes the collective ambiguous: exit 2 too.)
  require_one_line(
      run_cli("compare " + d.path("bad.log") + " --topology dgx-a100 --collective all_reduce"), 2,
      {d.path("bad.log") + ":" + std::to_string(line) + ":",
       "size 1048576 and count 7 float32 contradict each other"});
}

TEST_CASE("compare says when a ratio cannot be computed", "[cli][outputs][compare]") {
  // Before: a measured time of 1e-320 us printed +inf%.
  const ScratchDir d("twinccl-outputs-tiny");
  std::string log = read(kLog);
  const std::string row = "     1048576        262144     float     sum      -1    37.89";
  REQUIRE(log.find(row) != std::string::npos);
  log.replace(log.find(row), row.size(),
              "     1048576        262144     float     sum      -1   1e-320");
  d.write("tiny.log", log);
  const CliResult r = run_cli("compare " + d.path("tiny.log") + " --topology dgx-a100");
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("1e-320") && Contains("cannot be computed"));
  CHECK_THAT(r.out, !Contains("inf"));
}

TEST_CASE("whatif: faults in the order given, a name set twice takes the last value",
          "[cli][outputs][whatif]") {
  // Before: degrades ran before fails, so a degrade of a failed part exited 0.
  require_one_line(
      run_cli("whatif -t h100-cluster-2 -b 1M -e 1M --fail n1.nic3 --degrade n1.nic3=50%"), 2,
      {"--degrade n1.nic3=50%", "'n1.nic3' is gone", "earlier --fail"});
  // Before: "--set nodes=2 --set nodes=4" was an error.
  const CliResult r = run_cli("whatif -t dgx-h100 -b 1M -e 1M --set nodes=2 --set nodes=4");
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("nodes=4") && Contains("32 GPUs"));
}

TEST_CASE("whatif: a ratio to a missing first result is '-', not 0.00x", "[cli][outputs][whatif]") {
  // 64 B of all_gather splits into whole 16-byte blocks on 4 ranks but not on 8.
  const std::string args = "whatif all_gather -t dgx-h100 -t pcie-4gpu -b 64 -e 64";
  const CliResult table = run_cli(args);
  INFO(table.out);
  CHECK(table.exit_code == 0);
  CHECK_THAT(table.out, !Contains("0.00x") && Contains("no ratio can be computed"));
  const CliResult csv = run_cli(args + " --format csv");
  CHECK_THAT(csv.out, !Contains(",0.0000"));
  const CliResult json = run_cli(args + " --format json");
  const nlohmann::json j = nlohmann::json::parse(json.out);
  CHECK(j["rows"][0]["results"][0].is_null());
  CHECK(j["rows"][0]["results"][1]["ratio_to_first"].is_null());
}

TEST_CASE("minor: one spelling of --proto, no internal names, bounded echoes", "[cli][outputs]") {
  // Before: whatif accepted "ll" while perf refused it. Both now read a value that is not
  // twinccl's LL, LL128 or Simple as NCCL_PROTO (NCCL compares names without case), and refuse
  // a name NCCL does not know alike.
  require_one_line(run_cli("whatif -t dgx-h100 -b 1M -e 1M --proto ll9"), 2,
                   {"--proto", "'ll9'", "LL, LL128, Simple"});
  require_one_line(run_cli("perf all_reduce -c 0 -b 1M -e 1M --proto ll9"), 2,
                   {"--proto", "'ll9'", "LL, LL128, Simple"});
  // Before: whatif's "-d bool" said "parse_data_type: unknown data type".
  const CliResult d = run_cli("whatif -t dgx-h100 -b 1M -e 1M -d bool");
  INFO(d.out);
  CHECK(d.exit_code == 2);
  CHECK_THAT(d.out, Contains("'bool'") && !Contains("parse_data_type"));
  // Before: an unknown topology was echoed whole (100 kB) with its terminal escapes.
  const CliResult t = run_cli(
      "perf all_reduce -b 1M -e 1M -c 0 --topology \"$(printf '\\033[2J'; head -c 100000 "
      "/dev/zero | tr '\\0' a)\"");
  INFO(t.out.substr(0, 300));
  CHECK(t.exit_code == 2);
  CHECK(t.out.size() < 4000);
  CHECK(t.out.find('\x1b') == std::string::npos);
  CHECK_THAT(t.out, Contains("\\x1b[2J"));
}
