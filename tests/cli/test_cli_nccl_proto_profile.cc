// A cloud's NCCL profile sets NCCL_PROTO (GCP's TCPX / TCPXO: Simple); NCCL reads one value, so a
// run that sets NCCL_PROTO at all replaces it, even with a value restricting nothing for the
// collective (sim::NetworkNcclProto::applies, the one owner of that decision).
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cli/cli_runner.h"

using twinccl_test::compare_pairs;
using twinccl_test::run_cli;

namespace {

const std::string kGcp =
    "perf all_reduce --backend sim --topology gcp-a3mega-2 -c 0 -b 32K -e 32K --compare ";

// The protocols of the pairs perf --compare ranks on its one size line ("LL128", "Simple"...).
std::vector<std::string> ranked_protocols(const std::string& out) {
  std::vector<std::string> protocols;
  for (const auto& pair_time : compare_pairs(out))
    protocols.push_back(pair_time.first.substr(pair_time.first.find('/') + 1));
  return protocols;
}

bool has_other_than_simple(const std::vector<std::string>& protocols) {
  for (const std::string& p : protocols)
    if (p != "Simple") return true;
  return false;
}

}  // namespace

TEST_CASE("an NCCL_PROTO that restricts nothing for the collective still replaces GCP's Simple",
          "[cli][nccl_lists]") {
  const auto profile = run_cli(kGcp);
  REQUIRE(profile.exit_code == 0);
  REQUIRE(!ranked_protocols(profile.out).empty());
  CHECK(!has_other_than_simple(ranked_protocols(profile.out)));  // the profile's Simple
  for (const std::string value : {"^", "allgather:ll128", ";;;"}) {
    const auto set = run_cli(kGcp + "--proto '" + value + "'");
    INFO(value << "\n" << set.out);
    REQUIRE(set.exit_code == 0);
    CHECK(has_other_than_simple(ranked_protocols(set.out)));  // before: Simple alone but for '^'
    CHECK(set.out.find("replaces the NCCL_PROTO=Simple that gcp-a3mega-2's NCCL profile sets") !=
          std::string::npos);
  }
}

TEST_CASE(
    "a list that is the profile's own value replaces nothing, and the note has no nested parens",
    "[cli][nccl_lists]") {
  const auto simple = run_cli(kGcp + "--proto simple");
  REQUIRE(simple.exit_code == 0);
  CHECK(simple.out.find("replaces the NCCL_PROTO") == std::string::npos);
  const auto ll128 = run_cli(kGcp + "--proto 'Simple,LL128'");
  REQUIRE(ll128.exit_code == 0);
  CHECK(ll128.out.find("before plugin v1.0.12; Simple,LL128 from v1.0.12)") != std::string::npos);
  CHECK(ll128.out.find("(Simple,LL128 from") == std::string::npos);
}

TEST_CASE("perf: a protocol forced beside an NCCL_ALGO list keeps the profile's note",
          "[cli][nccl_lists]") {
  const std::string perf =
      "perf all_reduce --backend sim --topology gcp-a3mega-2 -c 0 -b 2M -e 2M ";
  const auto listed = run_cli(perf + "--algo 'Ring,Tree' --proto LL");
  INFO(listed.out);
  REQUIRE(listed.exit_code == 0);
  CHECK(listed.out.find("this cloud's NCCL profile sets NCCL_PROTO=Simple") != std::string::npos);
  const auto simple = run_cli(perf + "--algo 'Ring,Tree' --proto Simple");  // the control
  REQUIRE(simple.exit_code == 0);
  CHECK(simple.out.find("this cloud's NCCL profile sets") == std::string::npos);
}
