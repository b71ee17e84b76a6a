// Hostile flags, values, paths and environment given to the real `twinccl` program: every one ends
// at once (the run is killed after 10 s) in exit code 2 and one line naming the flag or variable
// and the bad value; never a hang, a crash, a silent default or exit 0 with a lost file.
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"

using Catch::Matchers::Contains;
using twinccl_test::CliResult;
using twinccl_test::run_cli;

namespace {

constexpr int kLimitS = 10;  // "returns within a few seconds": a hang shows as exit 124

CliResult twinccl(const std::string& args, const std::string& env = "") {
  return run_cli(args, env, kLimitS);
}

// Exit 2, every needle in the message, and the message is one bounded line.
void require_usage_error(const std::string& args, const std::vector<std::string>& needles,
                         const std::string& env = "") {
  INFO("twinccl " << args << (env.empty() ? "" : "   with " + env));
  CliResult r = twinccl(args, env);
  INFO(r.out);
  CHECK(r.exit_code == 2);
  for (const std::string& n : needles) CHECK_THAT(r.out, Contains(n));
  CHECK(r.out.size() < 600);
  CHECK(r.out.find('\n') == r.out.size() - 1);
  CHECK(r.seconds < kLimitS);
}

}  // namespace

TEST_CASE("perf: sweeps that would never end are refused, naming the flags and the cap",
          "[cli][hostile]") {
  require_usage_error("perf all_reduce -f 1.0000001 -c 0", {"-f 1.0000001", "4096 sizes"});
  require_usage_error("perf all_reduce -i 1 -e 1M -c 0", {"-i 1", "4096 sizes"});
  // Stepping near 2^64 used to wrap around and loop for ever; sizes above 1P are refused.
  require_usage_error(
      "perf all_reduce -b 18446744073709551000 -e 18446744073709551615 -i 1000 -c 0",
      {"-b '18446744073709551000'", "too large"});
}

TEST_CASE("perf -f: zero, negative, nan, inf and text are usage errors, not the default",
          "[cli][hostile]") {
  // -f 1 is nccl-tests' way of stepping by -i (tests/cli/test_nccl_tests_compat.cc).
  for (std::string f : {"0", "-2", "nan", "inf", "0.5", "0.999", "1e999", "two", "0x10"}) {
    require_usage_error("perf all_reduce -b 1M -e 1M -c 0 -f " + f, {"-f '" + f + "'"});
  }
  require_usage_error("perf all_reduce -b 0 -e 1M -c 0 -f 2", {"-b 0", "-i"});
}

TEST_CASE("perf: sizes are bytes with K/M/G/T suffixes, anything else names the flag",
          "[cli][hostile]") {
  for (std::string b : {"abc", "1.M", "1.5.5M", ".5M", "1e3", "-1", "99999999999999999999G", "nanG",
                        "12Q", "0x10", "1MBB", "2P"}) {
    require_usage_error("perf all_reduce -e 1G -c 0 -b " + b, {"-b '" + b + "'"});
  }
  require_usage_error("perf all_reduce -e 2000T -c 0", {"-e '2000T'", "too large"});
  require_usage_error("perf all_reduce -b 1M -e 1M -c 0 -i 0", {"-i '0'"});
  require_usage_error("perf all_reduce --check-max lots", {"--check-max 'lots'"});
  // 1MB and 1MiB are 1M, as nccl-tests reads them.
  CliResult mb = twinccl("perf all_reduce -b 1MB -e 1MiB -c 0 --format json");
  REQUIRE(mb.exit_code == 0);
  auto rows = nlohmann::json::parse(mb.out)["rows"];
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["size_bytes"] == 1048576);
}

TEST_CASE("perf: integer flags take decimal digits in range only", "[cli][hostile]") {
  require_usage_error("perf all_reduce -b 1M -e 1M -n -1", {"-n '-1'", "[1, 1000000]"});
  require_usage_error("perf all_reduce -b 1M -e 1M -n 0x10", {"-n '0x10'"});
  require_usage_error("perf all_reduce -b 1M -e 1M -n 010.0", {"-n '010.0'"});
  require_usage_error("perf all_reduce -b 1M -e 1M -w 1e99", {"-w '1e99'", "[0, 1000000]"});
  require_usage_error("perf all_reduce -b 1M -e 1M -w 99999999999999999999999",
                      {"-w '9999", "too large"});
  require_usage_error("perf all_reduce -b 1M -e 1M -c 1001", {"-c '1001'", "[0, 1000]"});
  require_usage_error("perf all_reduce -b 1M -e 1M -c yes", {"-c 'yes'"});
  require_usage_error("perf all_reduce -b 1M -e 1M -r -1", {"-r '-1'"});
  require_usage_error("perf broadcast -b 1M -e 1M -c 0 -r 9", {"-r 9", "[0, 7]", "dgx-h100"});
  require_usage_error("perf broadcast -b 1K -e 1K --backend emu --ranks 3 -r 3",
                      {"-r 3", "[0, 2]"});
  require_usage_error("perf all_reduce -b 1M -e 1M -c 0 --ranks 9",
                      {"--ranks 9", "dgx-h100 has 8 GPUs"});
  require_usage_error("perf all_reduce -b 1M -e 1M -c 0 -g 2 --ranks 3",
                      {"--ranks 3", "-g = 2", "disagree"});
}

TEST_CASE("perf: a repeated flag takes its last value, as nccl-tests does", "[cli][hostile]") {
  CliResult r = twinccl("perf all_reduce -b 1K -b 2M -e 1K -e 2M -c 0 --format json");
  REQUIRE(r.exit_code == 0);
  auto rows = nlohmann::json::parse(r.out)["rows"];
  REQUIRE(rows.size() == 1);
  CHECK(rows[0]["size_bytes"] == 2097152);
}

TEST_CASE("perf --backend emu: a million ranks or buffers larger than memory are refused up front",
          "[cli][hostile]") {
  require_usage_error("perf all_reduce --backend emu --ranks 1048576",
                      {"--ranks '1048576'", "threads, at most 4096"});
  require_usage_error("perf all_reduce --backend emu --ranks 0", {"--ranks '0'"});
  require_usage_error("perf all_reduce --backend emu -b 1T -e 1T",
                      {"1099511627776 bytes", "8 ranks", "limit"});
  // The limit follows `ulimit -v`: 1G on 8 ranks does not fit in half of 2 GB.
  require_usage_error("perf all_reduce --backend emu -b 1G -e 1G",
                      {"1073741824 bytes", "8 ranks", "ulimit -v"}, "ulimit -v 2000000;");
  // The simulator's check runs on the emulator too: --check-max cannot push it past the limit.
  require_usage_error("perf all_gather -b 1T -e 1T --check-max 1P", {"--check-max", "limit"});
}

TEST_CASE("perf: names that are not known are errors listing the valid ones", "[cli][hostile]") {
  require_usage_error("perf all_reduce -b 1M -e 1M -d bogus", {"-d 'bogus'", "bfloat16"});
  require_usage_error("perf all_reduce -b 1M -e 1M -o bogus", {"-o 'bogus'", "premul_sum"});
  require_usage_error("perf all_reduce -b 1M -e 1M -c 0 --proto bogus",
                      {"'bogus'", "LL128", "Simple"});
  require_usage_error("perf all_reduce -b 1K -e 1K --backend emu --proto ll9", {"'ll9'", "LL128"});
  require_usage_error("perf no_such_op -b 1K -e 1K", {"collective 'no_such_op'", "all_gather"});
  require_usage_error("perf --backend bogus", {"--backend", "bogus"});
  require_usage_error("frobnicate", {"frobnicate"});
  require_usage_error("perf --no-such-flag 3", {"--no-such-flag"});
}

TEST_CASE("perf: TWINCCL_ALGO and TWINCCL_PROTO with unknown names are errors, not ignored",
          "[cli][hostile]") {
  require_usage_error("perf all_reduce -b 1K -e 1K --backend emu",
                      {"TWINCCL_ALGO", "bogus", "ring"}, "TWINCCL_ALGO=bogus");
  require_usage_error("perf all_reduce -b 1M -e 1M -c 0", {"TWINCCL_PROTO", "'bogus'", "LL128"},
                      "TWINCCL_PROTO=bogus");
  require_usage_error("perf all_reduce -b 1K -e 1K --backend emu", {"TWINCCL_PROTO", "'bogus'"},
                      "TWINCCL_PROTO=bogus");
}

TEST_CASE("empty values are refused, not read as 'use the default'", "[cli][hostile]") {
  for (std::string flag : {"--topology", "--algo", "-b", "-e", "-f", "--trace", "-d", "--ranks"}) {
    require_usage_error("perf all_reduce -c 0 " + flag + " ''", {flag + " ''", "empty"});
  }
  // -c may be given without a value (checks on); -c '' is an empty value, not that.
  require_usage_error("perf all_reduce -b 8 -e 8 -c ''", {"-c ''", "empty"});
  require_usage_error("perf all_reduce -b 8 -e 8 --check ''", {"-c ''", "empty"});
  CliResult bare = twinccl("perf all_reduce -b 8 -e 8 -c");
  CHECK(bare.exit_code == 0);
  CHECK_THAT(bare.out, Contains("validation: 1"));
  require_usage_error("topo show ''", {"''"});
}

TEST_CASE("non-UTF-8 and huge values are shown escaped and cut short", "[cli][hostile]") {
  require_usage_error("perf all_reduce -b \"$(printf '\\377\\376')\"", {"-b '\\xff\\xfe'"});
  const std::string nines = "\"$(head -c 100000 /dev/zero | tr '\\0' 9)\"";
  require_usage_error("perf all_reduce -n " + nines, {"-n '9999", "...", "too large"});
  require_usage_error("perf all_reduce -e " + nines + "K", {"-e '9999", "...", "too large"});
  require_usage_error("perf all_reduce -f 1" + nines, {"-f '1999", "...", "too large"});
  require_usage_error("perf all_reduce --algo \"$(printf 'x%.0s' $(seq 1 5000))\" --backend emu",
                      {"--algo", "..."});
}

TEST_CASE("output files: a failed write is an error naming the path and the reason",
          "[cli][hostile]") {
  const std::string run = "perf all_reduce -b 16M -e 16M --algo ring --proto Simple -c 0 --trace ";
  CliResult full = twinccl(run + "/dev/full");
  CHECK(full.exit_code == 1);
  CHECK_THAT(full.out, Contains("--trace '/dev/full'") && Contains("No space left on device"));
  require_usage_error(run + "/nonexistent-dir/t.json",
                      {"--trace '/nonexistent-dir/t.json'", "No such file"});
  require_usage_error(run + "/tmp", {"--trace '/tmp'", "Is a directory"});
  // Standard output that cannot be written is a failure too, not exit 0.
  CHECK(twinccl("perf all_reduce -b 1M -e 1M -c 0 >/dev/full").exit_code == 1);
  // replay's timelines too (it used to exit 0 on a full disk and give no reason for a folder).
  const std::string replay = "replay " + std::string(TWINCCL_SOURCE_DIR) +
                             "/fuzz/corpus/trace_json/quickstart_4ranks.json -t dgx-h100 --trace ";
  CliResult replay_full = twinccl(replay + "/dev/full");
  CHECK(replay_full.exit_code == 1);
  CHECK_THAT(replay_full.out,
             Contains("--trace '/dev/full'") && Contains("No space left on device"));
  CliResult replay_missing = twinccl(replay + "/nonexistent-dir/t.json");
  CHECK(replay_missing.exit_code == 2);
  CHECK_THAT(replay_missing.out, Contains("No such file or directory"));
}

TEST_CASE("path arguments that are directories or missing name the path", "[cli][hostile]") {
  // The topology and trace readers may list the presets after the first line: no one-line check.
  for (std::string args : {"perf all_reduce -c 0 --topology /nonexistent/x.json",
                           "perf all_reduce -c 0 --topology /tmp", "topo check /tmp",
                           "replay /nonexistent/trace.json -t dgx-h100"}) {
    INFO(args);
    CliResult r = twinccl(args);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.out, Contains(args.substr(args.find('/'),
                                           args.find(' ', args.find('/')) - args.find('/'))));
    CHECK(r.seconds < kLimitS);
  }
}
