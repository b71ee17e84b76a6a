// A prediction on a preset says how far off the model was on published figures of that class of
// machine it was not fitted to (sim/held_out_record.h), as a user reads it in `perf` and `whatif`:
// the class the ranks' machine belongs to, the unedited preset's record under --set, nothing for
// a topology file or a machine no figure was judged on.
#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"
#include "twinccl/sim/held_out_record.h"
#include "twinccl/topologies/presets.h"

using Catch::Matchers::Contains;
using twinccl_test::run_cli;
namespace sim = twinccl::sim;

namespace {
std::string perf_header(const std::string& args) {
  const auto r = run_cli("perf all_reduce --backend sim -b 1M -e 1M -c 0 " + args);
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  return r.out;
}
}  // namespace

TEST_CASE("perf names the held-out record of the class its ranks run on") {
  const std::string efa = perf_header("--topology aws-p5-4");
  const auto& records = sim::held_out_records();
  const auto aws = std::find_if(records.begin(), records.end(), [](const sim::HeldOutRecord& r) {
    return r.machine_class == "aws-efa";
  });
  REQUIRE(aws != records.end());
  CHECK_THAT(efa, Contains("# held out: of the published aws-efa figures the analytic model was "
                           "not fitted to, " +
                           std::to_string(aws->large_within) + " of " + std::to_string(aws->large) +
                           " at >= 64 MiB were within 10%"));
  CHECK_THAT(efa, Contains("`twinccl calibrate`"));
  // 8 ranks of a 4-node cluster run in one node; one rank is a one-GPU world
  CHECK_THAT(perf_header("--topology h100-cluster-4 -g 8"),
             Contains("of the published nvswitch-1node figures"));
  CHECK_THAT(perf_header("--topology dgx-a100 -g 1"), Contains("of the published one-gpu figures"));
  CHECK_THAT(perf_header("--topology mi300x-roce-2 --set nic_gbps=25"),
             Contains("(docs/fidelity.md; the unedited preset's record)"));
  CHECK_THAT(perf_header("--topology torus-4x4"), !Contains("held out"));
  const std::string file =
      std::string(TWINCCL_SOURCE_DIR) + "/topologies/examples/cluster-64-h100.json";
  CHECK_THAT(perf_header("--topology " + file), !Contains("held out"));
}

TEST_CASE("whatif names each variant's held-out record, in its table and its JSON") {
  const auto r = run_cli(
      "whatif -t aws-p5-2 -t 'aws-p5-2 --set nic_gbps=50' -t pcie-4gpu --ranks 4 -b 1M -e 1M");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  const twinccl::topo::Topology p5 = twinccl::topo::load_topology("aws-p5-2");
  CHECK_THAT(r.out, Contains("#     " + sim::held_out_note("aws-p5-2", p5, 4, false) + "\n"));
  CHECK_THAT(r.out, Contains("#     " + sim::held_out_note("aws-p5-2", p5, 4, true) + "\n"));
  CHECK_THAT(r.out, Contains("of the published nvswitch-1node figures"));  // 4 ranks: one node
  const auto j = run_cli("whatif -t gb200-nvl72 -t pcie-4gpu --ranks 4 -b 1M -e 1M --format json");
  REQUIRE(j.exit_code == 0);
  const auto doc = nlohmann::json::parse(j.out);
  CHECK_THAT(doc["variants"][0]["held_out"].get<std::string>(), Contains("published nvl72"));
  CHECK(doc["variants"][1]["held_out"].get<std::string>().empty());
}

TEST_CASE("a file named like a preset has no class: it is not the preset's record") {
  CHECK(sim::machine_class_of("aws-p5-fit.json", 2, 16) == std::nullopt);
  CHECK(sim::machine_class_of("runs/aws-p5-2", 2, 16) == std::nullopt);
  CHECK(sim::machine_class_of("node.xml", 1, 8) == std::nullopt);
  CHECK(sim::machine_class_of("pcie-4gpu", 1, 4) == std::nullopt);
  CHECK(sim::machine_class_of("h100x16", 16, 128) == "ib-multinode");
  CHECK(
      sim::held_out_note("pcie-4gpu", twinccl::topo::load_topology("pcie-4gpu"), 4, false).empty());
}
