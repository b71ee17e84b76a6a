// `twinccl calibrate` as a new user meets it on AMD's MI300X logs: the file it writes predicts what
// it printed (compare on the file gives calibrate's "after" column), a host_launch_us fitted to
// its lower bound says so, `topo check` of the file names its per-hop extra, and --bandwidth-only
// names the latency regime's error only where the logs have latency rows.
#include <catch2/catch.hpp>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <utility>

#include "cli/cli_runner.h"

using twinccl_test::run_cli;

namespace {
std::string log_path(const std::string& name) {
  return std::string(TWINCCL_SOURCE_DIR) + "/tests/fidelity/logs/" + name;
}

// The per-regime error of each table line "<log...> <regime> <rows> ... <error>%..." whose first
// field ends with `log` (calibrate prints the path, compare the file name): the field `column`
// fields after the regime.
std::string error_of(const std::string& out, const std::string& log, const std::string& regime,
                     int column) {
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string first;
    fields >> first;
    if (!first.ends_with(log)) continue;
    std::string f;
    while (fields >> f && f != regime) {
    }
    if (f != regime) continue;
    for (int i = 0; i < column && fields >> f; ++i) {
    }
    return f;
  }
  return "";
}
}  // namespace

TEST_CASE("calibrate: the written file predicts calibrate's after column and says its bounds",
          "[cli]") {
  const twinccl_test::ScratchDir scratch("twinccl-cal-round");
  const std::string out = scratch.path("aac.json");
  const std::string one = "amd-mi300x-aac8-1node-all_reduce-mpi8.log";
  const std::string two = "amd-mi300x-aac10-2node-all_reduce-mpi16.log";
  const auto fit =
      run_cli("calibrate " + log_path(one) + " " + log_path(two) + " -t mi300x-roce-4 -o " + out);
  INFO(fit.out);
  REQUIRE(fit.exit_code == 0);
  // From RCCL's 0 the launch ends at the fit's floor: said, and 0.01 (not 0) is written.
  CHECK_THAT(fit.out, Catch::Contains("host_launch_us hit the fit's lower bound 0.01") ||
                          Catch::Contains("host_launch_us: hit the fit's lower bound 0.01"));
  for (const std::string& log : {one, two}) {
    const auto use = run_cli("compare " + log_path(log) + " --topology " + out);
    INFO(use.out);
    REQUIRE(use.exit_code == 0);
    for (const char* regime : {"latency", "middle", "bandwidth"}) {
      INFO(log << " " << regime);
      const std::string after = error_of(fit.out, log, regime, 3);
      CHECK_FALSE(after.empty());
      CHECK(error_of(use.out, log, regime, 2) == after);
    }
  }
  // topo check of the file: the links' latency, and the fitted per-hop extra beside it.
  const auto check = run_cli("topo check " + out);
  INFO(check.out);
  CHECK(check.exit_code == 0);
  // The fitted figure (the file's name carries it, as the fit wrote it) beside the links'.
  const std::string key = "network_hop_extra_us=";
  const std::size_t at = check.out.find(key);
  REQUIRE(at != std::string::npos);
  const double fitted = std::stod(check.out.substr(at + key.size()));
  CHECK(fitted > 50.0);  // AAC10's 219 - 256 us floor, over RCCL's 2 x 9.5 us hops
  char shown[32];
  std::snprintf(shown, sizeof shown, "%+.2f us on each network hop", fitted);
  CHECK_THAT(check.out, Catch::Contains(std::string(shown) + " the model charges "
                                                             "(network_hop_extra_us)"));
  const auto preset = run_cli("topo check mi300x-roce-4");
  CHECK_THAT(preset.out, Catch::Contains("latency up to") && !Catch::Contains("network_hop"));
}

TEST_CASE("calibrate --bandwidth-only names the latency regime's error only where there is one",
          "[cli]") {
  const twinccl_test::ScratchDir scratch("twinccl-cal-bwonly");
  const std::string out = scratch.path("fit.json");
  const std::string note = "the latency regime's error above is what they leave";
  // OCI's MI355X logs start at 8 GiB: no latency rows.
  const auto big =
      run_cli("calibrate " + log_path("oci-mi355x-pollara-1node-all_reduce-8G-16G.log") + " " +
              log_path("oci-mi355x-pollara-2node-all_reduce-8G-16G.log") +
              " --ranks 8,16 --nodes 1,2 -t mi355x-roce-2 --bandwidth-only -o " + out);
  INFO(big.out);
  REQUIRE(big.exit_code == 0);
  CHECK_THAT(big.out, Catch::Contains("not fitted (--bandwidth-only)") && !Catch::Contains(note));
  // AMD's logs start at small sizes: the note stays.
  const auto small = run_cli("calibrate " + log_path("amd-mi300x-aac8-1node-all_reduce-mpi8.log") +
                             " " + log_path("amd-mi300x-aac10-2node-all_reduce-mpi16.log") +
                             " -t mi300x-roce-4 --bandwidth-only -o " + out);
  INFO(small.out);
  REQUIRE(small.exit_code == 0);
  CHECK_THAT(small.out, Catch::Contains(note));
}
