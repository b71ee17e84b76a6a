// --algo / --proto in NCCL's syntax (cli/nccl_list_flags.h): where twinccl's exact names (which
// force) and NCCL's spelling (the variable, NCCL's own exclusions kept) diverge, the refusals
// that name the option, the environment note's advice, and the lists that restrict nothing.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cli/cli_runner.h"

using twinccl_test::count_of;
using twinccl_test::run_cli;

namespace {

std::string perf_on(const std::string& topology, const std::string& collective = "all_reduce") {
  return "perf " + collective + " --backend sim --topology " + topology + " -c 0 -b 2M -e 2M ";
}

// The first table row's algorithm/protocol ("ring/LL128"), "" when none.
std::string first_pair(const std::string& out) {
  const std::vector<std::string> row = twinccl_test::first_row(out);
  return row.empty() ? "" : row.back();
}

}  // namespace

TEST_CASE("exact names force, NCCL's spelling keeps NCCL's exclusions and is refused naming it",
          "[cli][nccl_lists]") {
  // MI300X: RCCL has no LL128 on gfx942; forced by twinccl's name it runs.
  const auto forced = run_cli(perf_on("mi300x-8") + "--proto LL128");
  REQUIRE(forced.exit_code == 0);
  CHECK(first_pair(forced.out).find("LL128") != std::string::npos);
  const std::string never = "forced by twinccl's exact name: NCCL's own choice never takes it";
  CHECK(forced.out.find(never) != std::string::npos);  // a header line says so
  const auto ll128 = run_cli(perf_on("mi300x-8") + "--proto ll128");
  CHECK(ll128.exit_code != 0);  // before: the tuner's message alone, no option or value
  CHECK(ll128.out.find("--proto (or TWINCCL_PROTO) 'll128' (NCCL_PROTO=ll128): ") !=
        std::string::npos);
  CHECK(ll128.out.find("no LL128 on gfx942") != std::string::npos);
  CHECK(ll128.out.find("--proto LL128") != std::string::npos);
  // One MI300X node: RCCL's table never picks tree/Simple; forced, it runs.
  const auto tree_simple = run_cli(perf_on("mi300x-8") + "--algo tree --proto Simple");
  REQUIRE(tree_simple.exit_code == 0);
  CHECK(tree_simple.out.find("tree/Simple for all_reduce is forced by twinccl's exact names") !=
        std::string::npos);
  const auto tree = run_cli(perf_on("mi300x-8") + "--algo tree --proto simple");
  CHECK(tree.exit_code != 0);
  CHECK(tree.out.find("'simple' (NCCL_PROTO=simple): ") != std::string::npos);
  CHECK(tree.out.find("tree/Simple within one MI300X node") != std::string::npos);
  // GCP's TCPXO profile sets NCCL_PROTO=Simple: a forced LL runs, and the note says a run sets
  // NCCL_PROTO itself to take it (test below: NCCL_PROTO=ll replaces the profile's).
  const auto ll = run_cli(perf_on("gcp-a3mega-2") + "--proto LL");
  REQUIRE(ll.exit_code == 0);
  CHECK(first_pair(ll.out).find("/LL") != std::string::npos);
  CHECK(ll.out.find("forced by twinccl's exact name: this cloud's NCCL profile sets "
                    "NCCL_PROTO=Simple") != std::string::npos);
  CHECK(ll.out.find("(as --proto 'll' predicts)") != std::string::npos);
  const auto ring = run_cli(perf_on("aws-p5-2") + "--algo ring --proto LL128");
  REQUIRE(ring.exit_code == 0);
  CHECK(ring.out.find("NCCL's own choice never") == std::string::npos);  // NCCL may take it
  // NCCL's spelling of the algorithm: the pair is not "forced by twinccl's exact names".
  const auto mixed = run_cli(perf_on("mi300x-8") + "--algo Tree --proto LL128");
  REQUIRE(mixed.exit_code == 0);  // else the note's absence below says nothing
  CHECK(mixed.out.find("twinccl's exact name") == std::string::npos);
  // NCCL_PROTO=ll, the user's, replaces the profile's Simple (NCCL reads one value): LL is ranked.
  const auto lower = run_cli(perf_on("gcp-a3mega-2") + "--proto ll");
  REQUIRE(lower.exit_code == 0);  // before: refused, as if the profile's Simple still held
  CHECK(first_pair(lower.out) == first_pair(ll.out));
  CHECK(lower.out.find("NCCL_PROTO=ll (from --proto) replaces the NCCL_PROTO=Simple that "
                       "gcp-a3mega-2's NCCL profile sets") != std::string::npos);
}

// Off the simulator --proto forces one of twinccl's names (perf_command.cc keeps that check for
// the measured backends only): a list there is refused, pointing at --backend sim.
TEST_CASE("perf on a measured backend refuses an NCCL_PROTO list, naming --backend sim",
          "[cli][nccl_lists]") {
  const auto emu = run_cli("perf all_reduce --backend emu -b 1K -e 1K --proto '^LL128'");
  CHECK(emu.exit_code == 2);
  CHECK(emu.out.find("--proto (or TWINCCL_PROTO) '^LL128': unknown protocol; valid: LL, LL128, "
                     "Simple; NCCL_PROTO's syntax") != std::string::npos);
  CHECK(emu.out.find("restricts the simulator's choice: --backend sim") != std::string::npos);
}

TEST_CASE("one NCCL name that does not apply is refused naming the option", "[cli][nccl_lists]") {
  const auto gather = run_cli(perf_on("aws-p5-2", "all_gather") + "--algo Tree");
  CHECK(gather.exit_code != 0);
  CHECK(gather.out.find("--algo (or TWINCCL_ALGO) 'Tree' (NCCL_ALGO=Tree): ") != std::string::npos);
  const auto nvls = run_cli(perf_on("aws-p5-2") + "--algo NVLS");
  CHECK(nvls.exit_code != 0);
  CHECK(nvls.out.find("'NVLS' (NCCL_ALGO=NVLS): ") != std::string::npos);
  const auto whatif = run_cli("whatif all_reduce --topology mi300x-8 -b 2M -e 2M --proto ll128");
  CHECK(whatif.exit_code != 0);
  CHECK(whatif.out.find("--proto 'll128' (NCCL_PROTO=ll128): ") != std::string::npos);
}

TEST_CASE(
    "whatif --algo help is refused naming --algo, a bad value is shown twice, not three times",
    "[cli][nccl_lists]") {
  const auto help = run_cli("whatif all_reduce --topology dgx-h100 -b 2M -e 2M --algo help");
  CHECK(help.exit_code != 0);
  CHECK(help.out.find("--algo") != std::string::npos);
  CHECK(help.out.find("does not exist") == std::string::npos);  // before: sim::predict's words
  const auto foo = run_cli(perf_on("aws-p5-2") + "--algo foo");
  CHECK(foo.exit_code != 0);
  CHECK(foo.out.find("unknown algorithm 'foo'") != std::string::npos);
  // "--algo (or TWINCCL_ALGO) 'foo': NCCL_ALGO: unknown algorithm 'foo'" (before: three times)
  CHECK(count_of(foo.out, "foo") == 2);
}

TEST_CASE("replay takes one NCCL name as twinccl's", "[cli][nccl_lists]") {
  const std::string trace =
      std::string(TWINCCL_SOURCE_DIR) + "/fuzz/corpus/trace_json/quickstart_4ranks.json";
  const auto nccl = run_cli("replay " + trace + " --topology dgx-h100 --algo Ring");
  const auto ours = run_cli("replay " + trace + " --topology dgx-h100 --algo ring");
  REQUIRE(ours.exit_code == 0);
  CHECK(nccl.exit_code == 0);
  CHECK(nccl.out == ours.out);
}

TEST_CASE("a list that restricts nothing for the collective says so", "[cli][nccl_lists]") {
  const auto plain = run_cli(perf_on("aws-p5-2"));
  REQUIRE(!first_pair(plain.out).empty());  // else the pairs below compare equal as ""
  for (const char* value : {"--algo '^'", "--proto '^'", "--algo 'allgather:ring'"}) {
    CAPTURE(value);
    const auto r = run_cli(perf_on("aws-p5-2") + value);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out.find("(restricts nothing for all_reduce)") != std::string::npos);
    CHECK(first_pair(r.out) == first_pair(plain.out));
  }
  const auto some = run_cli(perf_on("aws-p5-2") + "--algo 'allreduce:ring'");
  CHECK(some.out.find("restricts nothing") == std::string::npos);
}

TEST_CASE("the environment note advises the option that means the variable, shell-quoted",
          "[cli][nccl_lists]") {
  // Three collectives by default: the note once.
  const std::string sweep = "perf --backend sim --topology aws-p5-2 -c 0 -b 2M -e 2M";
  const auto ll = run_cli(sweep, "env -u NCCL_ALGO NCCL_PROTO=LL");
  REQUIRE(ll.exit_code == 0);
  CHECK(count_of(ll.out, "NOT applied") == 1);
  CHECK(ll.out.find("--proto 'll'") != std::string::npos);  // before: 'LL', which forces LL
  CHECK(ll.out.find("--proto 'LL'") == std::string::npos);
  const auto given = run_cli(sweep + " --proto Simple", "env -u NCCL_ALGO NCCL_PROTO=LL");
  CHECK(given.out.find("NOT applied") == std::string::npos);
  const auto quote = run_cli(sweep, "env -u NCCL_PROTO NCCL_ALGO=\"Ring'; echo x\"");
  CHECK(quote.out.find("--algo 'Ring'\\''; echo x'") != std::string::npos);
  // A replay forces one name: a list is not offered to it.
  const std::string trace =
      std::string(TWINCCL_SOURCE_DIR) + "/fuzz/corpus/trace_json/quickstart_4ranks.json";
  const auto replay =
      run_cli("replay " + trace + " --topology dgx-h100", "env -u NCCL_PROTO NCCL_ALGO='^NVLS'");
  REQUIRE(replay.exit_code == 0);
  CHECK(replay.out.find("NOT applied") != std::string::npos);
  CHECK(replay.out.find("--algo '^NVLS'") == std::string::npos);
  CHECK(replay.out.find("cannot apply the list") != std::string::npos);
}

TEST_CASE("csv and json carry the lists whole, machine-readable", "[cli][nccl_lists]") {
  const std::string algo = "--algo '^NVLS,NVLSTree'";
  const auto csv = run_cli(perf_on("aws-p5-2") + algo + " --format csv");
  REQUIRE(csv.exit_code == 0);
  CHECK(csv.out.rfind("# nccl_algo=\"^NVLS,NVLSTree\",nccl_proto=null\ncollective,", 0) == 0);
  const auto plain = run_cli(perf_on("aws-p5-2") + "--format csv");
  CHECK(plain.out.rfind("collective,", 0) == 0);  // unchanged without lists
  std::string long_value = "^";                   // all but LL128, 301 characters: not cut
  for (int i = 0; i < 50; ++i) long_value += "LL128,";
  const auto json = run_cli(perf_on("aws-p5-2") + "--proto '" + long_value + "' --format json");
  REQUIRE(json.exit_code == 0);
  CHECK(json.out.find("\"nccl_proto\": \"" + long_value + "\"") != std::string::npos);
  CHECK(json.out.find("\"nccl_algo\": null") != std::string::npos);
  const std::string whatif = "whatif all_reduce --topology aws-p5-2 -b 2M -e 2M " + algo;
  const auto wcsv = run_cli(whatif + " --format csv");
  REQUIRE(wcsv.exit_code == 0);
  CHECK(wcsv.out.rfind("# nccl_algo=\"^NVLS,NVLSTree\",nccl_proto=null\nvariant,", 0) == 0);
  const auto wjson = run_cli(whatif + " --format json");
  CHECK(wjson.out.find("\"nccl_algo\": \"^NVLS,NVLSTree\"") != std::string::npos);
}
