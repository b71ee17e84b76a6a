// --algo / --proto in NCCL's own syntax (cli/nccl_list_flags.h): a value as a cluster's
// NCCL_ALGO / NCCL_PROTO has it ("^LL128", "Ring,Tree", "simple") restricts NCCL's ranking in
// perf --backend sim and whatif, as the variable does; one twinccl name still forces it.
#include <catch2/catch.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli_runner.h"

using twinccl_test::compare_pairs;
using twinccl_test::fields;
using twinccl_test::first_row;
using twinccl_test::run_cli;

namespace {

// A size where NCCL's own choice on aws-p5-2 (2 x 8 H100 over EFA) is an LL128 pair.
const std::string kPerf = "perf all_reduce --backend sim --topology aws-p5-2 -c 0 -b 2M -e 2M ";

}  // namespace

TEST_CASE("perf --proto ^LL128 takes NCCL's next choice, as NCCL_PROTO=^LL128 does",
          "[cli][nccl_lists]") {
  const auto all = run_cli(kPerf + "--compare");
  REQUIRE(all.exit_code == 0);
  const std::vector<std::string> chosen = first_row(all.out);
  REQUIRE(!chosen.empty());
  REQUIRE(chosen.back().find("LL128") != std::string::npos);  // the case this test is about
  std::string marked_all;
  const auto pairs = compare_pairs(all.out, marked_all);
  REQUIRE(marked_all == chosen.back());

  const auto r = run_cli(kPerf + "--proto '^LL128' --compare");
  REQUIRE(r.exit_code == 0);  // before: "unknown protocol; valid: LL, LL128, Simple"
  CHECK(r.out.find("NCCL_PROTO=^LL128 (from --proto)") != std::string::npos);
  const std::vector<std::string> row = first_row(r.out);
  REQUIRE(!row.empty());
  const std::string pair = row.back();
  CHECK(pair.find("LL128") == std::string::npos);
  // The restricted table lists no LL128 pair and marks the row perf reports.
  std::string marked;
  for (const auto& [p, t] : compare_pairs(r.out, marked))
    CHECK(p.find("LL128") == std::string::npos);
  CHECK(marked == pair);
  // Its time is that pair's in the unrestricted table: what NCCL's next-ranked pair runs at.
  bool timed = false;
  for (const auto& [p, t] : pairs) {
    if (p != pair) continue;
    timed = true;
    CHECK(std::stod(row[5]) == Approx(std::stod(t)).margin(0.051));  // 85.52 vs 85.5
  }
  CHECK(timed);
}

TEST_CASE("one NCCL name is the same prediction as twinccl's name", "[cli][nccl_lists]") {
  const auto forced = run_cli(kPerf + "--algo ring");
  const auto nccl = run_cli(kPerf + "--algo Ring");
  REQUIRE(forced.exit_code == 0);
  REQUIRE(nccl.exit_code == 0);
  REQUIRE(!first_row(forced.out).empty());  // else the rows compare equal as two empty ones
  CHECK(first_row(nccl.out) == first_row(forced.out));
  CHECK(nccl.out.find("NCCL_ALGO=Ring (from --algo)") != std::string::npos);
  // Where "Simple" (forced) and "simple" (NCCL_PROTO) differ: test_cli_nccl_list_refusals.cc.
}

TEST_CASE("NCCL_ALGO lists and per-collective lists leave NCCL the choice among them",
          "[cli][nccl_lists]") {
  for (const char* algo :
       {"'Ring,Tree'", "'^NVLS,NVLSTree'", "'allreduce:tree,ring;allgather:ring'"}) {
    CAPTURE(algo);
    const auto r = run_cli(kPerf + "-b 8 -e 1G -f 64 --algo " + algo);
    REQUIRE(r.exit_code == 0);
    std::istringstream in(r.out);
    int rows = 0;
    for (std::string line; std::getline(in, line);) {
      const std::vector<std::string> w = fields(line);
      if (w.empty() || line[0] == '#' || !std::isdigit(static_cast<unsigned char>(w[0][0])))
        continue;
      ++rows;
      const std::string a = w.back().substr(0, w.back().find('/'));
      CHECK((a == "ring" || a == "tree"));
    }
    CHECK(rows >= 4);
  }
}

TEST_CASE("bad NCCL_ALGO / NCCL_PROTO values are typed errors naming the option",
          "[cli][nccl_lists]") {
  const auto unknown = run_cli(kPerf + "--algo 'Ring,Rnig'");
  CHECK(unknown.exit_code != 0);
  CHECK(unknown.out.find("--algo") != std::string::npos);
  CHECK(unknown.out.find("Rnig") != std::string::npos);
  CHECK(unknown.out.find("NCCL knows Tree, Ring") != std::string::npos);
  CHECK(unknown.out.find("nvls_tree") != std::string::npos);  // twinccl's names too
  const auto none = run_cli(kPerf + "--proto '^LL,LL128,Simple'");
  CHECK(none.exit_code != 0);
  CHECK(none.out.find("--proto") != std::string::npos);
  CHECK(none.out.find("leaves none") != std::string::npos);
  const auto collnet = run_cli(kPerf + "--algo CollNetDirect");
  CHECK(collnet.exit_code != 0);
  CHECK(collnet.out.find("CollNet") != std::string::npos);
  CHECK(collnet.out.find("no cost") != std::string::npos);
  // A replay forces one algorithm on every collective: a list is refused, one NCCL name taken.
  const std::string trace = std::string(TWINCCL_SOURCE_DIR) + "/README.md";
  const auto replay = run_cli("replay " + trace + " --topology dgx-h100 --algo 'Ring,Tree'");
  CHECK(replay.exit_code != 0);
  CHECK(replay.out.find("restrict a sweep's prediction only") != std::string::npos);
}

TEST_CASE("whatif takes NCCL's syntax and says so", "[cli][nccl_lists]") {
  const auto r =
      run_cli("whatif all_reduce --topology aws-p5-2 -b 2M -e 2M --proto '^LL128' --format json");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("NCCL_PROTO=^LL128 (from --proto)") != std::string::npos);
  CHECK(r.out.find("\"LL128\"") == std::string::npos);
}

TEST_CASE("NCCL_ALGO / NCCL_PROTO in the environment are not applied, and a note says so",
          "[cli][nccl_lists]") {
  const auto plain = run_cli(kPerf, "env -u NCCL_ALGO -u NCCL_PROTO");
  const auto env = run_cli(kPerf, "env -u NCCL_ALGO NCCL_PROTO='^LL128'");
  REQUIRE(env.exit_code == 0);
  CHECK(env.out.find("NCCL_PROTO=^LL128 set in this environment is NOT applied") !=
        std::string::npos);
  CHECK(env.out.find("--proto '^LL128'") != std::string::npos);
  CHECK(first_row(env.out) == first_row(plain.out));
  CHECK(plain.out.find("NOT applied") == std::string::npos);
}

// GCP's TCPX / TCPXO profiles set NCCL_PROTO=Simple; the user's own NCCL_PROTO replaces it, as
// NCCL reads one value (the one set last): the protocols the list allows are ranked, and the
// header says whose value the list replaced.
TEST_CASE("perf and whatif: an NCCL_PROTO list replaces GCP's profile Simple and ranks LL128 too",
          "[cli][nccl_lists]") {
  const std::string gcp =
      "perf all_reduce --backend sim --topology gcp-a3mega-2 -c 0 -b 32K -e 32K --compare ";
  const std::string replaced =
      "NCCL_PROTO=Simple,LL128 (from --proto) replaces the NCCL_PROTO=Simple that "
      "gcp-a3mega-2's NCCL profile sets";
  const auto profile = run_cli(gcp);
  REQUIRE(profile.exit_code == 0);
  std::string marked;
  const auto profile_pairs = compare_pairs(profile.out, marked);
  REQUIRE(!profile_pairs.empty());  // else the loop below checks nothing
  for (const auto& [p, t] : profile_pairs) CHECK(p.find("/Simple") != std::string::npos);
  CHECK(profile.out.find("replaces the NCCL_PROTO") == std::string::npos);
  const auto listed = run_cli(gcp + "--proto 'Simple,LL128'");
  INFO(listed.out);
  REQUIRE(listed.exit_code == 0);
  bool ll128 = false;
  for (const auto& [p, t] : compare_pairs(listed.out, marked)) {
    CHECK((p.find("/Simple") != std::string::npos || p.find("/LL128") != std::string::npos));
    ll128 = ll128 || p.find("/LL128") != std::string::npos;
  }
  CHECK(ll128);  // before: Simple pairs alone
  CHECK(listed.out.find(replaced) != std::string::npos);
  // An NCCL_ALGO list alone keeps the profile's NCCL_PROTO.
  const auto algo = run_cli(gcp + "--algo 'Ring,Tree'");
  REQUIRE(algo.exit_code == 0);
  const std::vector<std::string> algo_row = first_row(algo.out);
  REQUIRE(!algo_row.empty());  // back() of an empty row is undefined
  CHECK(algo_row.back().find("/Simple") != std::string::npos);
  CHECK(algo.out.find("replaces the NCCL_PROTO") == std::string::npos);
  // Where no profile sets NCCL_PROTO, nothing is said to be replaced.
  const auto aws = run_cli(kPerf + "--proto 'Simple,LL128'");
  REQUIRE(aws.exit_code == 0);
  CHECK(aws.out.find("NCCL profile") == std::string::npos);
  const auto whatif = run_cli(
      "whatif all_reduce --topology gcp-a3mega-2 -b 32K -e 32K --proto 'Simple,LL128' --format "
      "json");
  REQUIRE(whatif.exit_code == 0);
  CHECK(whatif.out.find(replaced) != std::string::npos);
  CHECK(whatif.out.find("\"LL128\"") != std::string::npos);
}
