// `twinccl perf --backend sim -c 1`: #wrong comes from the emulator running the algorithm the row
// names, chosen on the row's own topology (the loaded and edited one), never on another.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cli_runner.h"
#include "twinccl/sim/tuner.h"

namespace {

// Every checked row ran, on the emulator, the schedule of the algorithm the row is labelled with
// (nvls_tree plays hierarchical). Returns the labels seen.
std::set<std::string> check_rows_ran_their_label(const std::string& args) {
  INFO(args);
  const twinccl_test::CliResult r = twinccl_test::run_cli(args + " --format json", "", 120);
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(!j["rows"].empty());
  std::set<std::string> labels;
  for (const auto& row : j["rows"]) {
    const std::string label = row["algorithm"];
    labels.insert(label);
    REQUIRE(row.contains("checked_algorithm"));
    CHECK(row["checked_algorithm"] == std::string(twinccl::sim::schedule_for(label)));
    CHECK(row["out_of_place"]["wrong"] == 0);
    CHECK(row["in_place"]["wrong"] == 0);
  }
  return labels;
}

}  // namespace

TEST_CASE("perf --backend sim checks every row with the algorithm it names, on its topology",
          "[cli]") {
  const std::string sweep = " -b 1K -e 4M -f 4096 -c 1";
  SECTION("no --topology: dgx-h100, as the prediction") {
    // The 4 MiB all_reduce is NVLS on dgx-h100 (it was checked with plain ring).
    CHECK(check_rows_ran_their_label("perf all_reduce" + sweep).count("nvls") == 1);
  }
  SECTION("--set nodes=2: the edited topology, 16 GPUs") {
    // The edit was ignored: the emulator's choice ran on the unedited 8 GPUs (ring for 16 ranks).
    const auto labels = check_rows_ran_their_label(
        "perf all_reduce reduce_scatter --topology dgx-h100 --set "
        "nodes=2 --ranks 16" +
        sweep);
    CHECK(labels != std::set<std::string>{"ring"});
  }
  SECTION("a bare cloud NCCL XML with --gpu h100") {
    // The check loaded the XML again without --gpu, which it needs.
    check_rows_ran_their_label("perf all_reduce --topology " + std::string(TWINCCL_SOURCE_DIR) +
                               "/topologies/examples/nccl-xml/azure-ndv5-topo.xml --gpu h100" +
                               sweep);
  }
}
