// `twinccl compare` reports every row it does not compare: a warning on stderr with file:line and
// why, and the count in the table (and JSON); a log with no row to compare exits 2 saying why.
// The old code dropped rows with a garbled or negative size without a word and exited 0 on a log
// whose rows all had a time of 0.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.h"

using Catch::Matchers::Contains;
using twinccl_test::run_cli;

namespace {

std::string published_log() {
  return std::string(TWINCCL_SOURCE_DIR) +
         "/tests/fidelity/logs/a100-sxm4-80gb-1node-all_reduce-g8.log";
}

// The published log with lines replaced (1-based line -> new text), written to `scratch`.
std::string edited_log(const twinccl_test::ScratchDir& scratch, const std::string& name,
                       const std::map<int, std::string>& lines) {
  std::ifstream in(published_log());
  std::ostringstream out;
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    const auto it = lines.find(++n);
    out << (it == lines.end() ? line : it->second) << "\n";
  }
  scratch.write(name, out.str());
  return scratch.path(name);
}

}  // namespace

TEST_CASE("compare warns about every row it does not compare, with file:line and why",
          "[cli][compare]") {
  // Line 16 is the 8-byte row, line 17 the 16-byte row of the published log.
  const twinccl_test::ScratchDir scratch("twinccl-compare-garbled");
  const std::string log = edited_log(
      scratch, "garbled.log",
      {{16,
        "          1P             2     float     sum      -1    40.12    0.00    0.00      0 "
        "   38.85    0.00    0.00      0"},
       {17,
        "         -16             4     float     sum      -1    39.64    0.00    0.00      0 "
        "   39.19    0.00    0.00      0"}});
  const auto r = run_cli("compare " + log + " --topology dgx-a100");
  INFO(r.out);
  CHECK(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("warning: " + log + ":16: not compared: the size '1P'"));
  CHECK_THAT(r.out, Contains("warning: " + log + ":17: not compared: the size '-16'"));
  CHECK_THAT(r.out, Contains("# 2 row(s) not compared (lines 16, 17)"));
  const auto j = run_cli("compare " + log + " --topology dgx-a100 --format json");
  const auto doc = nlohmann::json::parse(j.out.substr(j.out.find('{')));  // after the warnings
  CHECK(doc["tables"][0]["skipped_rows"] == 2);
  CHECK(doc["tables"][0]["skipped"][0]["line"] == 16);
  CHECK(doc["tables"][0]["rows"].size() == 28);
}

TEST_CASE("compare of a log with no row to compare exits 2 saying why", "[cli][compare]") {
  std::map<int, std::string> zero_times;
  std::ifstream in(published_log());
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    if (line.find(" float ") == std::string::npos || line.front() == '#') continue;
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string x; fields >> x;) f.push_back(x);
    f[5] = "0";  // the out-of-place time
    std::string joined;
    for (const std::string& x : f) joined += x + " ";
    zero_times[n] = joined;
  }
  REQUIRE(zero_times.size() == 30);
  const twinccl_test::ScratchDir scratch("twinccl-compare-zero");
  const std::string log = edited_log(scratch, "zero.log", zero_times);
  const auto r = run_cli("compare " + log + " --topology dgx-a100");
  INFO(r.out);
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Contains("no row of the log(s) could be compared: 30 row(s)") &&
                        Contains(log + ":16: a measured time of 0"));
}
