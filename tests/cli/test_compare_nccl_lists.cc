// `twinccl compare LOG --algo/--proto` in NCCL_ALGO / NCCL_PROTO syntax (cli/nccl_list_flags.h), as
// perf and whatif take it: the run's variable, replacing the log's of its kind; one twinccl name
// still forces. The outputs say which list the rows were predicted with and what it replaced.
#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cli/cli_runner.h"
#include "support/forced_ring_log.h"

using twinccl_test::run_cli;

namespace {

std::string log_path(const std::string& name) {
  return std::string(TWINCCL_SOURCE_DIR) + "/tests/fidelity/logs/" + name;
}

// 2 x 8 H100 over InfiniBand, 8 B - 16 GiB, no NCCL_ALGO / NCCL_PROTO in the log.
const std::string kCompare = "compare " +
                             log_path("issue309-h100-xe9680-2node-all_reduce-8B-16G.log") +
                             " --topology h100-cluster-2 ";

// Every row's predicted "algorithm" (or "protocol") of a compare JSON's first table.
std::set<std::string> predicted(const std::string& json_text, const char* what) {
  std::set<std::string> out;
  const nlohmann::json j = nlohmann::json::parse(json_text);
  for (const auto& r : j.at("tables").at(0).at("rows"))
    out.insert(r["predicted"][what].get<std::string>());
  return out;
}

}  // namespace

TEST_CASE("compare --algo takes an NCCL_ALGO list and says so in every format",
          "[cli][compare][nccl_lists]") {
  const auto json = run_cli(kCompare + "--algo 'Ring,Tree' --format json");
  INFO(json.out);
  REQUIRE(json.exit_code == 0);  // before: "algorithm 'Ring,Tree' does not exist for all_reduce"
  for (const std::string& a : predicted(json.out, "algorithm")) CHECK((a == "ring" || a == "tree"));
  const auto own = run_cli(kCompare + "--format json");
  REQUIRE(own.exit_code == 0);
  CHECK(predicted(own.out, "algorithm").count("nvls_tree") == 1);  // what the list took away
  const auto j = nlohmann::json::parse(json.out);
  CHECK(j["tables"][0].at("nccl_algo") == "Ring,Tree");
  CHECK(j["tables"][0].at("nccl_algo_from") == "--algo");
  CHECK(j.at("restriction").get<std::string>().find("NCCL_ALGO=Ring,Tree (from --algo)") == 0);
  const auto table = run_cli(kCompare + "--algo 'Ring,Tree'");
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("# note: NCCL_ALGO=Ring,Tree (from --algo): NCCL's choice among") !=
        std::string::npos);
  CHECK(table.out.find("; NCCL_ALGO=Ring,Tree (--algo)") != std::string::npos);  // the title
  const auto csv = run_cli(kCompare + "--proto '^LL128' --format csv");
  REQUIRE(csv.exit_code == 0);
  CHECK(csv.out.find(",,,^LL128,--proto,,,\n") != std::string::npos);
  CHECK(csv.out.find(",LL128,") == std::string::npos);
}

TEST_CASE("compare: one NCCL name predicts as twinccl's name", "[cli][compare][nccl_lists]") {
  const auto nccl = run_cli(kCompare + "--algo Ring --format json");
  const auto ours = run_cli(kCompare + "--algo ring --format json");
  REQUIRE(nccl.exit_code == 0);
  REQUIRE(ours.exit_code == 0);
  const auto a = nlohmann::json::parse(nccl.out)["tables"][0]["rows"];
  const auto b = nlohmann::json::parse(ours.out)["tables"][0]["rows"];
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i]["predicted"] == b[i]["predicted"]);
  CHECK(nlohmann::json::parse(ours.out)["tables"][0].at("forced_algorithm") == "ring");
}

// A twinccl exact name is no NCCL variable: nccl_algo / nccl_proto keep the log's values (the
// variables the run had), and the forced name is reported apart in every format.
TEST_CASE("compare reports a forced exact name apart from the NCCL variables",
          "[cli][compare][nccl_lists]") {
  const twinccl_test::ScratchDir scratch("twinccl-compare-forced-name");
  const std::string log = scratch.path("forced-ring.log");
  // NCCL_ALGO=Ring on line 6, NCCL_PROTO=Simple on line 7; two ranks of one node.
  scratch.write("forced-ring.log", twinccl_test::forced_ring_log("node-a", "Simple"));
  const std::string cmd = "compare " + log + " --topology dgx-h100 --algo tree --proto LL ";
  const auto json = run_cli(cmd + "--format json");
  INFO(json.out);
  REQUIRE(json.exit_code == 0);
  const auto t = nlohmann::json::parse(json.out)["tables"][0];
  CHECK(t.at("nccl_algo") == "Ring");  // before: "tree", a name NCCL_ALGO never had
  CHECK(t.at("nccl_algo_from") == "line 6");
  CHECK(t.at("nccl_proto") == "Simple");  // before: "LL"
  CHECK(t.at("forced_algorithm") == "tree");
  CHECK(t.at("forced_protocol") == "LL");
  CHECK(t["rows"][0]["predicted"]["algorithm"] == "tree");
  CHECK(t["rows"][0]["predicted"]["protocol"] == "LL");
  const auto table = run_cli(cmd);
  REQUIRE(table.exit_code == 0);
  CHECK(table.out.find("; NCCL_ALGO=Ring (line 6); NCCL_PROTO=Simple (line 7); forced tree "
                       "(--algo); forced LL (--proto)") != std::string::npos);
  const auto csv = run_cli(cmd + "--format csv");
  REQUIRE(csv.exit_code == 0);
  CHECK(csv.out.find(",Ring,line 6,Simple,line 7,,tree,LL\n") != std::string::npos);
}

// perf's note on a forced exact name NCCL's own choice never takes there, once per table.
TEST_CASE("compare notes a forced protocol NCCL's own choice never takes",
          "[cli][compare][nccl_lists]") {
  const auto gcp = run_cli("compare " + log_path("gcp-a3mega-h100-2node-all_reduce.log") +
                           " --topology gcp-a3mega-2 --proto LL");
  INFO(gcp.out);
  REQUIRE(gcp.exit_code == 0);
  const std::string profile =
      "ring/LL for all_reduce is forced by twinccl's exact name: this cloud's NCCL profile sets "
      "NCCL_PROTO=Simple";
  const std::size_t at = gcp.out.find(profile);
  CHECK(at != std::string::npos);
  CHECK(gcp.out.find(profile, at + 1) == std::string::npos);  // once
  const auto csv = run_cli("compare " + log_path("gcp-a3mega-h100-2node-all_reduce.log") +
                           " --topology gcp-a3mega-2 --proto LL --format csv");
  REQUIRE(csv.exit_code == 0);
  CHECK(csv.out.rfind("# note: ", 0) == 0);  // before: no notes in the CSV
  CHECK(csv.out.find(profile) != std::string::npos);
  CHECK(csv.out.find("\nrecord,source,") != std::string::npos);
  const auto mi300x = run_cli("compare " + log_path("amd-mi300x-aac8-1node-all_reduce-mpi8.log") +
                              " --topology mi300x-8 --proto LL128");
  INFO(mi300x.out);
  REQUIRE(mi300x.exit_code == 0);
  CHECK(mi300x.out.find("NCCL's own choice never takes it on this machine") != std::string::npos);
  const auto own = run_cli("compare " + log_path("gcp-a3mega-h100-2node-all_reduce.log") +
                           " --topology gcp-a3mega-2 --proto Simple");  // the control
  REQUIRE(own.exit_code == 0);
  CHECK(own.out.find("is forced by twinccl's exact name") == std::string::npos);
}

TEST_CASE("compare refuses bad NCCL_ALGO / NCCL_PROTO values as perf does",
          "[cli][compare][nccl_lists]") {
  const auto unknown = run_cli(kCompare + "--algo 'Ring,Rnig'");
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.out.find("--algo 'Ring,Rnig'") != std::string::npos);
  CHECK(unknown.out.find("NCCL knows Tree, Ring") != std::string::npos);
  CHECK(unknown.out.find("nvls_tree") != std::string::npos);  // twinccl's names too
  const auto none = run_cli(kCompare + "--proto '^LL,LL128,Simple'");
  CHECK(none.exit_code == 2);
  CHECK(none.out.find("leaves none") != std::string::npos);
  const auto collnet = run_cli(kCompare + "--algo CollNetDirect");
  CHECK(collnet.exit_code == 2);
  CHECK(collnet.out.find("CollNet") != std::string::npos);
  // One NCCL name that does not apply: the option and the value first, as perf's.
  const auto gather = run_cli("compare " + log_path("gcp-a3mega-2node-all_gather-8M-8G.log") +
                              " --topology gcp-a3mega-2 --collective all_gather --ranks 16 "
                              "--nodes 2 --algo Tree");
  CHECK(gather.exit_code == 2);
  CHECK(gather.out.find("--algo 'Tree' (NCCL_ALGO=Tree): ") != std::string::npos);
}

TEST_CASE("compare: each flag replaces the log's own variable of its kind, and says so",
          "[cli][compare][nccl_lists]") {
  const twinccl_test::ScratchDir scratch("twinccl-compare-lists");
  const std::string log = scratch.path("forced-ring.log");
  // NCCL_ALGO=Ring on line 6, NCCL_PROTO=Simple on line 7; two ranks of one node.
  scratch.write("forced-ring.log", twinccl_test::forced_ring_log("node-a", "Simple"));
  const auto r = run_cli("compare " + log + " --topology dgx-h100 --proto '^Simple' --format json");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  const auto t = nlohmann::json::parse(r.out)["tables"][0];
  CHECK(t.at("nccl_algo") == "Ring");  // the log's, kept
  CHECK(t.at("nccl_algo_from") == "line 6");
  CHECK(t.at("nccl_proto") == "^Simple");
  CHECK(t.at("nccl_proto_from") == "--proto; replaces the log's NCCL_PROTO=Simple (line 7)");
  CHECK(t["rows"][0]["predicted"]["algorithm"] == "ring");
  CHECK(t["rows"][0]["predicted"]["protocol"] != "Simple");
}

// GCP's TCPXO profile sets NCCL_PROTO=Simple; the run's own NCCL_PROTO replaces it (NCCL reads one
// value), so LL128 is ranked too, and the table says whose value it replaced.
TEST_CASE("compare: an NCCL_PROTO list replaces GCP's profile NCCL_PROTO=Simple",
          "[cli][compare][nccl_lists]") {
  const std::string gcp =
      "compare " + log_path("gcp-a3mega-h100-2node-all_reduce.log") + " --topology gcp-a3mega-2 ";
  const auto profile = run_cli(gcp + "--format json");
  REQUIRE(profile.exit_code == 0);
  CHECK(predicted(profile.out, "protocol") == std::set<std::string>{"Simple"});
  CHECK(nlohmann::json::parse(profile.out)["tables"][0].count("notes") == 0);
  const auto listed = run_cli(gcp + "--proto 'Simple,LL128' --format json");
  INFO(listed.out);
  REQUIRE(listed.exit_code == 0);
  CHECK(predicted(listed.out, "protocol").count("LL128") == 1);  // before: Simple alone
  const auto notes = nlohmann::json::parse(listed.out)["tables"][0].at("notes");
  REQUIRE(notes.size() == 1);
  CHECK(notes[0].get<std::string>().find("NCCL_PROTO=Simple,LL128 (from --proto) replaces the "
                                         "NCCL_PROTO=Simple that gcp-a3mega-2's NCCL profile "
                                         "sets") == 0);
}

// A log's own NCCL_PROTO replaces GCP's profile Simple even where it restricts nothing ('^'): NCCL
// read the log's value (predict_logged, calibrate's path too).
TEST_CASE("compare: a log's NCCL_PROTO that restricts nothing still replaces GCP's Simple",
          "[cli][compare][nccl_lists]") {
  const twinccl_test::ScratchDir scratch("twinccl-compare-proto-all");
  scratch.write("all.log", twinccl_test::forced_ring_log("node-a", "^"));
  scratch.write("none.log", twinccl_test::forced_ring_log("node-a"));
  const auto all =
      run_cli("compare " + scratch.path("all.log") + " --topology gcp-a3mega-2 --format json");
  INFO(all.out);
  REQUIRE(all.exit_code == 0);
  CHECK(predicted(all.out, "protocol").count("Simple") == 0);  // before: Simple, the profile's
  const auto t = nlohmann::json::parse(all.out)["tables"][0];
  REQUIRE(t.count("notes") == 1);
  CHECK(t["notes"][0].get<std::string>().find("replaces the NCCL_PROTO=Simple") !=
        std::string::npos);
  const auto none =
      run_cli("compare " + scratch.path("none.log") + " --topology gcp-a3mega-2 --format json");
  REQUIRE(none.exit_code == 0);  // the control: no NCCL_PROTO in the log, the profile's Simple
  CHECK(predicted(none.out, "protocol") == std::set<std::string>{"Simple"});
}
