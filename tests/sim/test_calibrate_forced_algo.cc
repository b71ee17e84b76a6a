// A log's forced algorithm and protocol (NCCL_ALGO / NCCL_PROTO): read from NCCL's INFO line, an
// environment dump or -J's "env", replaced by the user's option, and used by calibrate, so a
// forced 2-node ring sweep gives the NICs' rate back where NCCL's own 2-node choice hides it.
#include <catch2/catch.hpp>
#include <cmath>

#include "calibrate_sweep.h"
#include "support/forced_ring_log.h"
#include "twinccl/errors.h"
#include "twinccl/sim/calibrate.h"
#include "twinccl/sim/nccl_env_choice.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_edit.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

// Two nodes; NCCL_ALGO=Ring on line 6, NCCL_PROTO=Simple on line 7.
const std::string kRingLog = twinccl_test::forced_ring_log("node-b", "Simple");

NcclTestsTable parsed(const std::string& text, const NcclTestsParseOptions& o = {}) {
  const std::vector<NcclTestsTable> t = parse_nccl_tests_output(text, "ring.log", o);
  REQUIRE(t.size() == 1);
  return t.front();
}

using calibrate_test::edited;
using calibrate_test::sweep;

}  // namespace

TEST_CASE("NCCL's INFO lines set a log's algorithm and protocol, the option replaces them") {
  const NcclTestsTable t = parsed(kRingLog);
  CHECK(t.nccl_algo == "Ring");
  CHECK(t.nccl_algo_from == "line 6");
  CHECK(t.nccl_proto == "Simple");
  const LoggedChoice c = logged_choice(t);
  REQUIRE(c.algorithms == std::vector<std::string>{"ring"});
  REQUIRE(c.protocols == std::vector<Protocol>{Protocol::simple});
  CHECK(c.label() == "ring/Simple");
  CHECK_THAT(c.from, Catch::Contains("NCCL_ALGO=Ring (line 6)"));

  NcclTestsParseOptions o;
  o.nccl_algo = "NVLS,NVLSTree";
  const NcclTestsTable given = parsed(kRingLog, o);
  CHECK(given.nccl_algo == "NVLS,NVLSTree");
  CHECK(given.nccl_algo_from == "--algo");
  CHECK(logged_choice(given).algorithms == std::vector<std::string>{"nvls", "nvls_tree"});

  // An environment dump or a launcher's -x, and NCCL's per-collective lists.
  const NcclTestsTable dumped =
      parsed(std::string("mpirun -np 2 -x NCCL_ALGO='^NVLS,NVLSTree;allgather:Ring' "
                         "./all_reduce_perf -b 8\n") +
             kRingLog);
  CHECK(dumped.nccl_algo == "Ring");  // NCCL's own line, later, wins
  NcclTestsTable all_but = parsed(std::string(kRingLog));
  all_but.nccl_algo = "^NVLS,NVLSTree;allgather:Ring";
  all_but.nccl_proto = "";
  CHECK(logged_choice(all_but).algorithms == std::vector<std::string>{"tree", "ring", "pat"});
}

TEST_CASE("nccl-tests -J JSON: the run's environment list gives NCCL_ALGO / NCCL_PROTO") {
  const std::string json = R"({"args": ["./build/all_reduce_perf", "-J", "o.json"],
    "env": ["PATH=/usr/bin", "NCCL_PROTO=LL128", "NCCL_ALGO=Tree"],
    "config": {"nthreads": 1, "ngpus": 1, "devices": [
      {"rank": 0, "hostname": "n0"}, {"rank": 1, "hostname": "n1"}]},
    "results": [{"size": 1024, "count": 256, "type": "float", "redop": "sum", "root": -1,
      "out_of_place": {"time": 21.5, "alg_bw": 0.05, "bus_bw": 0.05, "nwrong": 0},
      "in_place": {"time": 20.5, "alg_bw": 0.05, "bus_bw": 0.05, "nwrong": 0}}]})";
  const std::vector<NcclTestsTable> t = parse_nccl_tests_json(json, "run.json");
  REQUIRE(t.size() == 1);
  CHECK(t[0].nccl_algo == "Tree");
  CHECK(t[0].nccl_algo_from == "env[2]");
  CHECK(t[0].nccl_proto == "LL128");
  CHECK(logged_choice(t[0]).label() == "tree/LL128");
}

TEST_CASE("a forced algorithm or protocol NCCL does not know is a typed error naming it") {
  NcclTestsTable t = parsed(kRingLog);
  t.nccl_algo = "Rnig";
  CHECK_THROWS_AS(logged_choice(t), ConfigError);
  CHECK_THROWS_WITH(logged_choice(t), Catch::Contains("ring.log (line 6)") &&
                                          Catch::Contains("unknown algorithm 'Rnig'") &&
                                          Catch::Contains("NVLSTree"));
  t.nccl_algo = "CollNetDirect";
  CHECK_THROWS_WITH(logged_choice(t),
                    Catch::Contains("CollNetDirect") && Catch::Contains("no cost for"));
  t.nccl_algo = "Ring;Tree";
  CHECK_THROWS_WITH(logged_choice(t), Catch::Contains("'collective:' prefix"));
  t.nccl_algo = "Ring";
  t.nccl_proto = "LL256";
  CHECK_THROWS_WITH(logged_choice(t), Catch::Contains("unknown protocol 'LL256'"));
  // Forced PAT on 8 GPUs a node: it cannot run there, said with the log's name.
  t.nccl_proto = "";
  t.nccl_algo = "PAT";
  t.ranks = 16;
  CHECK_THROWS_AS(predict_logged(topo::load_topology("h100-cluster-2"),
                                 request_of(t, t.rows.front()), logged_choice(t), t.source),
                  ConfigError);
}

TEST_CASE("a list lets NCCL choose among its algorithms only") {
  const topo::Topology t = topo::load_topology("h100-cluster-2");
  NcclTestsTable table = sweep(t, 16, "2node.log", "", std::size_t{1} << 30);
  const Request r = request_of(table, table.rows.back());
  const std::string own = predict(t, r).algorithm;
  table.nccl_algo = "Ring,Tree";
  const Prediction p = predict_logged(t, r, logged_choice(table));
  CHECK((p.algorithm == "ring" || p.algorithm == "tree"));
  table.nccl_algo = "^" + std::string(own == "nvls_tree" ? "NVLSTree" : own);
  CHECK(predict_logged(t, r, logged_choice(table)).algorithm != own);
}

TEST_CASE("calibrate: a forced 2-node ring sweep gives the NICs' rate back, NCCL's choice not") {
  // NICs at 35 GB/s behind NVLink at 80%: NCCL's own 2-node choice (NVLS-tree) is bound by one
  // node's NVLS stage, so its rows hide the NICs (test_calibrate.cc); a ring crosses them in every
  // step. The 2-node log is a forced ring sweep.
  const topo::Topology truth = edited("h100-cluster-4", 0.8 * 370.8, 35.0);
  std::vector<NcclTestsTable> logs = {sweep(truth, 8, "1node.log", ""),
                                      sweep(truth, 16, "2node-ring.log", "ring")};
  const topo::Topology preset = topo::load_topology("h100-cluster-4");
  CalibrationOptions bandwidths;
  bandwidths.latencies = false;

  logs[1].nccl_algo = "Ring";  // as NCCL's INFO line says it
  logs[1].nccl_algo_from = "line 7";
  const Calibration ring = calibrate(preset, logs, bandwidths);
  REQUIRE(ring.moved.size() == 2);
  CHECK(ring.moved[1].name == "nic_gbps");
  CHECK(ring.moved[1].not_determined.empty());
  CHECK(ring.moved[1].after >= 30.0);  // NCCL's speeds 30, 40: [30, 40) predict alike
  CHECK(ring.moved[1].after <= 40.0);
  REQUIRE(ring.priced_with.size() == 2);
  CHECK(ring.priced_with[0].priced_with == "NCCL's choice");
  CHECK(ring.priced_with[1].priced_with == "ring");
  CHECK(ring.priced_with[1].from == "NCCL_ALGO=Ring (line 7)");

  // The same rows taken as NCCL's choice: priced as NVLS-tree, the NIC is not found.
  logs[1].nccl_algo.clear();
  const Calibration own = calibrate(preset, logs, bandwidths);
  REQUIRE(own.moved.size() >= 2);  // and the NICs' share, fitted on what the wrong rate leaves
  CHECK(own.moved[1].name == "nic_gbps");
  const bool off = !own.moved[1].not_determined.empty() || own.moved[1].after < 30.0 ||
                   own.moved[1].after > 40.0;
  CHECK(off);
}
