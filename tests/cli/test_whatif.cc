// What-if flags and `twinccl whatif`, run as a user runs them: every parameter and fault moves the
// prediction the expected way through perf (the analytic model, and the flow model's busiest
// links), bad values are usage errors listing what can be set, and whatif prints its side-by-side
// table, CSV, JSON and (with gnuplot installed) its plot.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "cli_runner.h"
#include "support/skip.h"

using Catch::Matchers::Contains;
using twinccl_test::run_cli;

namespace {

// Predicted out-of-place time (us) of one all_reduce size (256 MiB unless `size` says).
double perf_time_us(const std::string& args, const std::string& size = "256M") {
  const auto r =
      run_cli("perf all_reduce -b " + size + " -e " + size + " -c 0 --format json " + args);
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  return j["rows"].back()["out_of_place"]["time_us"].get<double>();
}

// As twinccl looks for it: an executable gnuplot in a folder of PATH.
bool gnuplot_installed() {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (!dir.empty() && ::access((dir + "/gnuplot").c_str(), X_OK) == 0) return true;
  }
  return false;
}

// A 16-rank trace (two DGX nodes): one 64 MiB all_reduce over the world after some compute,
// written in `scratch`.
std::string write_trace(const twinccl_test::ScratchDir& scratch) {
  const std::string path = scratch.path("trace.json");
  nlohmann::json doc{{"format", "twinccl-trace"}, {"version", 1},     {"program", "whatif test"},
                     {"world_size", 16},          {"ranks", nullptr}, {"communicators", nullptr}};
  std::vector<int> all;
  for (int r = 0; r < 16; ++r) all.push_back(r);
  doc["communicators"] = nlohmann::json::array({{{"name", "world"}, {"ranks", all}}});
  doc["ranks"] = nlohmann::json::array();
  for (int r = 0; r < 16; ++r) {
    doc["ranks"].push_back(
        {{"rank", r},
         {"ops", nlohmann::json::array({{{"kind", "all_reduce"},
                                         {"comm", 0},
                                         {"seq", 0},
                                         {"count", 16 << 20},
                                         {"dtype", "float32"}}})},
         {"events", nlohmann::json::array({{{"compute_s", 0.001}}, {{"op", 0}}, {{"wait", 0}}})}});
  }
  std::ofstream(path) << doc.dump();
  return path;
}

}  // namespace

TEST_CASE("whatif parameters move perf's prediction the expected way", "[cli][whatif]") {
  const double cluster = perf_time_us("--topology h100-cluster-2");
  // Half-rate NICs: the 2-node NVLS-tree's NIC bound (8 NICs x nic_gbps x 2(n-1)/n busbw)
  // falls below NCCL's Hopper NVLS-tree cap (8 x 57.7), which bound it before: ~1.27x slower.
  CHECK(perf_time_us("--topology h100-cluster-2 --set nic_gbps=25") > cluster * 1.2);
  CHECK(perf_time_us("--topology h100-cluster-2 --set nics_per_node=4") > cluster * 1.3);
  CHECK(perf_time_us("--topology dgx-h100 --set nodes=2") == Approx(cluster).epsilon(1e-6));
  const double node = perf_time_us("--topology dgx-h100");
  CHECK(perf_time_us("--topology dgx-h100 --set nvlink_gbps=741.6") < node * 0.8);
  CHECK(perf_time_us("--topology dgx-h100 --set nvlink_gbps=185.4") > node * 1.3);
}

TEST_CASE("whatif fabric parameters move the flow model's prediction", "[cli][whatif]") {
  // A failed NIC sends rail 3's traffic across a spine; an oversubscribed fabric then slows it.
  const std::string flow = "--topology h100-cluster-2 --fidelity flow --algo ring ";
  const double crossing = perf_time_us(flow + "--fail nic3@node1");
  CHECK(perf_time_us(flow + "--fail nic3@node1 --set oversubscription=8") > crossing * 1.3);
  CHECK(perf_time_us(flow + "--fail nic3@node1 --set network_gbps=5") > crossing * 1.3);
  // Latency shows at a small size: the ring's node crossings go leaf -> spine -> leaf (rails are
  // rotated per channel), and leaf-spine latency is beyond NCCL's own network hop figure.
  const double small = perf_time_us(flow, "64K");
  CHECK(perf_time_us(flow + "--set network_latency_us=20", "64K") > small + 20.0);
}

TEST_CASE("whatif faults cost time and --links shows where traffic moved", "[cli][whatif]") {
  const double cluster = perf_time_us("--topology h100-cluster-2");
  CHECK(perf_time_us("--topology h100-cluster-2 --fail nic3@node1") > cluster * 1.05);
  CHECK(perf_time_us("--topology h100-cluster-2 --degrade nic3@node1=25%") > cluster * 1.3);
  const double node = perf_time_us("--topology dgx-h100");
  CHECK(perf_time_us("--topology dgx-h100 --degrade gpu2=50%") > node * 1.3);  // a slow GPU

  const std::string links =
      "perf all_reduce -b 256M -e 256M -c 0 --topology h100-cluster-2 "
      "--algo ring --links";
  const auto before = run_cli(links);
  REQUIRE(before.exit_code == 0);
  const auto after = run_cli(links + " --fail nic3@node1");
  INFO(after.out);
  REQUIRE(after.exit_code == 0);
  CHECK_THAT(after.out, Contains("what-if: routes moved") && Contains("n1.gpu3 through n1.nic2"));
  CHECK_THAT(after.out, !Contains("n1.nic3->"));
  // The busiest link is now n1.nic2's, carrying two rails' traffic out of node 1.
  const auto top_link = [](const std::string& out) {
    const std::size_t head = out.find("# link (direction)");
    REQUIRE(head != std::string::npos);
    const std::size_t start = out.find('\n', head) + 1;
    std::istringstream line(out.substr(start, out.find('\n', start) - start));
    std::pair<std::string, double> top;
    line >> top.first >> top.second;
    return top;
  };
  const auto was = top_link(before.out);
  const auto now = top_link(after.out);
  CHECK_THAT(now.first, Contains("n1.nic2"));
  CHECK(now.second > 1.5 * was.second);
}

TEST_CASE("whatif flags reach compare's prediction", "[cli][whatif]") {
  // A measured 2-node H100 log (tests/fidelity/logs) against the model with slower NICs.
  // __FILE__ may be relative to the build folder: look upwards from here as test_compare does.
  auto dir = std::filesystem::path(__FILE__).parent_path() / ".." / "fidelity" / "logs";
  for (auto p = std::filesystem::current_path();
       !std::filesystem::exists(dir) && p != p.parent_path(); p = p.parent_path()) {
    dir = p / "tests" / "fidelity" / "logs";
  }
  const std::string log = (dir / "issue309-h100-xe9680-2node-all_reduce-8B-16G.log").string();
  const auto predicted_us = [&](const std::string& edits) {
    const auto r = run_cli("compare " + log + " --topology h100-cluster-2 --format json " + edits);
    INFO(r.out);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    return j["tables"][0]["rows"].back()["predicted"]["time_us"].get<double>();
  };
  CHECK(predicted_us("--set nic_gbps=25") > 1.2 * predicted_us(""));  // see the perf case
  const auto table = run_cli("compare " + log + " --topology h100-cluster-2 --fail nic3@node1");
  CHECK(table.exit_code == 0);
  CHECK_THAT(table.out, Contains("# what-if: --fail nic3@node1"));
}

TEST_CASE("whatif flags: unknown names and impossible values are usage errors", "[cli][whatif]") {
  const auto unknown = run_cli("perf all_reduce --topology dgx-h100 --set nvlnk_gbps=600");
  CHECK(unknown.exit_code == 2);
  CHECK_THAT(unknown.out, Contains("unknown parameter 'nvlnk_gbps'") && Contains("nvlink_gbps") &&
                              Contains("nics_per_node") && Contains("oversubscription"));
  const auto negative = run_cli("perf all_reduce --topology dgx-h100 --set nvlink_gbps=-1");
  CHECK(negative.exit_code == 2);
  CHECK_THAT(negative.out, Contains("must be in"));
  const auto part = run_cli("topo show h100-cluster-2 --fail nic9@node1");
  CHECK(part.exit_code == 2);
  CHECK_THAT(part.out, Contains("no part 'nic9@node1'"));
  const auto cut = run_cli(
      "whatif -t 'h100-cluster-2 --fail leaf.su0.r0 --fail leaf.su0.r1 "
      "--fail leaf.su0.r2 --fail leaf.su0.r3 --fail leaf.su0.r4 --fail "
      "leaf.su0.r5 --fail leaf.su0.r6 --fail leaf.su0.r7'");
  CHECK(cut.exit_code == 2);
  CHECK_THAT(cut.out, Contains("after --fail leaf.su0.r0") && Contains("cannot reach"));
  const auto no_topology = run_cli("perf all_reduce --backend emu --set nic_gbps=10");
  CHECK(no_topology.exit_code == 2);
  CHECK_THAT(no_topology.out, Contains("give --topology"));
  const auto shown = run_cli("topo show h100-cluster-2 --fail nic3@node1");
  CHECK(shown.exit_code == 0);
  CHECK_THAT(shown.out, Contains("what-if: --fail nic3@node1: n1.nic3 and its 2 links removed"));
}

TEST_CASE("whatif prints the side-by-side table, CSV and JSON", "[cli][whatif]") {
  const std::string study =
      "whatif all_reduce -b 1M -e 64M -f 4 -t dgx-h100 -t 'dgx-h100 --set nvlink_gbps=741.6' "
      "-t 'h100-cluster-2 --degrade nic3@node1=25%'";
  const auto table = run_cli(study);
  INFO(table.out);
  REQUIRE(table.exit_code == 0);
  CHECK_THAT(table.out, Contains("# [1] dgx-h100 (8 GPUs)") &&
                            Contains("# [2] dgx-h100 --set nvlink_gbps=741.6 (8 GPUs") &&
                            Contains("# [3] h100-cluster-2 --degrade nic3@node1=25% (16 GPUs") &&
                            Contains("time_us") && Contains("busbw") && Contains("1.00x"));
  const auto csv = run_cli(study + " --format csv");
  REQUIRE(csv.exit_code == 0);
  CHECK_THAT(csv.out, Contains("variant,label,topology,gpus,size_bytes,bytes,time_us"));
  const auto json = run_cli(study + " --format json");
  REQUIRE(json.exit_code == 0);
  const auto j = nlohmann::json::parse(json.out);
  REQUIRE(j["variants"].size() == 3);
  REQUIRE(j["rows"].size() == 4);  // 1M, 4M, 16M, 64M
  const auto& big = j["rows"].back()["results"];
  CHECK(big[0]["ratio_to_first"].get<double>() == 1.0);
  CHECK(big[1]["time_us"].get<double>() < big[0]["time_us"].get<double>());  // faster NVLink
  CHECK(big[1]["ratio_to_first"].get<double>() < 1.0);
  CHECK(big[2]["busbw_gbps"].get<double>() < big[0]["busbw_gbps"].get<double>());
}

TEST_CASE("whatif --replay compares one trace on several topologies", "[cli][whatif]") {
  const twinccl_test::ScratchDir scratch("twinccl-whatif-replay");
  const std::string trace = write_trace(scratch);
  const auto r = run_cli("whatif --replay " + trace +
                         " -t h100-cluster-2 -t 'h100-cluster-2 --degrade nic3@node1=25%' "
                         "-t 'h100-cluster-2 --degrade gpu3@node0=50%' --format json");
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto& cells = j["rows"][0]["results"];
  CHECK(cells[1]["time_us"].get<double>() > cells[0]["time_us"].get<double>());
  CHECK(cells[1]["ratio_to_first"].get<double>() > 1.0);
  // A GPU at half speed: its 1 ms of compute takes 2 ms, and the all_reduce waits for it.
  CHECK(cells[2]["time_us"].get<double>() > cells[0]["time_us"].get<double>() + 900.0);
  const auto sizes = run_cli("whatif --replay " + trace + " -t h100-cluster-2 -b 1M");
  CHECK(sizes.exit_code == 2);
  CHECK_THAT(sizes.out, Contains("are for a sweep"));
}

TEST_CASE("whatif --plot writes an SVG and a PNG (CTest: Skipped without gnuplot)",
          "[cli][whatif]") {
  if (!gnuplot_installed()) {
    return twinccl_test::skip_test(
        "gnuplot is not installed (apt-get install gnuplot-nox); --plot not tested");
  }
  const twinccl_test::ScratchDir scratch("twinccl-whatif-plot");
  for (const std::string ext : {".svg", ".png"}) {
    const std::string out = scratch.path("busbw" + ext);
    const auto r = run_cli(
        "whatif all_reduce -b 1M -e 16M -t dgx-h100 -t 'dgx-h100 --set "
        "nvlink_gbps=741.6' --plot " +
        out);
    INFO(r.out);
    CHECK(r.exit_code == 0);
    CHECK(std::filesystem::exists(out));
    CHECK(std::filesystem::file_size(out) > 1000);
  }
}

TEST_CASE("whatif --plot without gnuplot says how to install it", "[cli][whatif]") {
  // A PATH with `timeout` and nothing else: gnuplot cannot be found.
  const twinccl_test::ScratchDir bin("twinccl-whatif-bin");
  std::filesystem::create_symlink("/usr/bin/timeout", bin.path("timeout"));
  const auto r =
      run_cli("whatif all_reduce -t dgx-h100 --plot out.svg", "PATH=" + bin.dir.string());
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Contains("apt-get install gnuplot-nox"));
  const auto bad = run_cli("whatif all_reduce -t dgx-h100 --plot out.pdf");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.out, Contains(".svg or .png"));
}

TEST_CASE("replay --trace names each timeline inside its folder, whatever the topology's name",
          "[cli][whatif][hostile]") {
  // A topology file named "../escaped/x y" used to send its timeline outside the --trace folder
  // (OUT's folder / "t.../escaped/x y.json").
  const twinccl_test::ScratchDir scratch("twinccl-whatif-timelines");
  const std::string trace = write_trace(scratch);
  nlohmann::json topology;
  std::ifstream(std::string(TWINCCL_SOURCE_DIR) + "/topologies/examples/cluster-64-h100.json") >>
      topology;
  topology["name"] = "../escaped/x y";
  const std::filesystem::path root = scratch.dir / "timelines";
  std::filesystem::create_directories(root / "out");
  const std::string file = (root / "hostile.json").string();
  std::ofstream(file) << topology.dump();
  const auto r = run_cli("replay " + trace + " -t h100-cluster-2 -t " + file +
                         " -t 'h100-cluster-2 --degrade nic3@node1=25%' --trace " +
                         (root / "out" / "t.json").string());
  INFO(r.out);
  REQUIRE(r.exit_code == 0);
  CHECK(std::filesystem::exists(root / "out" / "t.h100-cluster-2.json"));
  CHECK(std::filesystem::exists(root / "out" / "t.x_y.json"));
  CHECK(std::filesystem::exists(root / "out" / "t.h100-cluster-2_degrade_nic3@node1=25_.json"));
  CHECK_FALSE(std::filesystem::exists(root / "escaped"));
}

// 800G NICs on a gen5 node: the prediction does not move (every route takes the 48 GB/s PCIe
// link), and perf's header and `topo check` say why, once each; a gen6 path lets the NICs run.
TEST_CASE("800G NICs behind gen5 PCIe: the prediction says why it does not move", "[cli][whatif]") {
  const std::string b200 = "--backend sim --topology b200-cluster-2";
  const double at_400g = perf_time_us(b200);
  CHECK(perf_time_us(b200 + " --set nic_gbps=100") == Approx(at_400g));
  // Fed by gen6 it moves (less than 2x: NVLS-tree's in-node stage binds at 2 nodes).
  CHECK(perf_time_us(b200 + " --set nic_gbps=100 --set pcie_gbps=96") < 0.97 * at_400g);
  const auto perf = run_cli("perf all_reduce -b 1M -e 1M -c 0 " + b200 + " --set nic_gbps=100");
  REQUIRE(perf.exit_code == 0);
  CHECK_THAT(perf.out, Contains("# what-if: 16 NICs run at most at their PCIe link: 100 GB/s "
                                "ports behind 48 GB/s PCIe links"));
  const auto check = run_cli("topo check b200-cluster-2 --set nic_gbps=100");
  REQUIRE(check.exit_code == 0);
  const std::string said = "NICs run at most at their PCIe link";
  const std::size_t first = check.out.find(said);
  REQUIRE(first != std::string::npos);
  CHECK(check.out.find(said, first + 1) == std::string::npos);  // once, as a warning
  CHECK_THAT(check.out, Contains("warnings: 1"));
}
