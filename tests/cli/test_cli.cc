// The `twinccl` program as a user runs it: tables, formats, flags, exit codes and messages.
#include <catch2/catch.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.h"

using Catch::Matchers::Contains;

namespace {

using Result = twinccl_test::CliResult;

Result twinccl(const std::string& args) { return twinccl_test::run_cli(args, "", 300); }

}  // namespace

TEST_CASE("perf on the simulator prints the nccl-tests table with algorithm and #wrong", "[cli]") {
  Result r = twinccl("perf all_reduce -b 8 -e 64M -f 8 --topology dgx-h100");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("out-of-place") && Contains("in-place") && Contains("busbw") &&
                        Contains("#wrong"));
  CHECK_THAT(r.out, Contains("predicted for dgx-h100 (8 GPUs)"));
  CHECK_THAT(r.out, Contains("ring/LL"));  // small sizes: latency-bound protocol
  CHECK_THAT(r.out, Contains("Out of bounds values : 0 OK"));
  CHECK_THAT(r.out, Contains("Avg bus bandwidth"));
}

TEST_CASE("perf json output parses and its busbw follows nccl-tests' formula", "[cli]") {
  Result r = twinccl("perf reduce_scatter all_gather -b 1M -e 4M -f 2 --format json -c 0");
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["rows"].size() == 6);
  for (const auto& row : j["rows"]) {
    double algbw = row["out_of_place"]["algbw_gbps"], busbw = row["out_of_place"]["busbw_gbps"];
    double t = row["out_of_place"]["time_us"];
    double bytes = row["size_bytes"];
    CHECK(algbw == Approx(bytes / (t * 1e-6) / 1e9));
    CHECK(busbw == Approx(algbw * 7.0 / 8.0));
    CHECK(row["out_of_place"]["wrong"].is_null());
  }
}

TEST_CASE("perf csv and forced algorithm/protocol", "[cli]") {
  Result r = twinccl("perf all_reduce -b 1M -e 1M --algo ring --proto LL128 --format csv -c 0");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("collective,size_bytes,count") &&
                        Contains("all_reduce,1048576,262144,float32,sum,-1,ring,LL128"));
}

TEST_CASE("perf on the emulator measures and checks", "[cli]") {
  Result r = twinccl(
      "perf all_reduce broadcast --backend emu --ranks 3 -b 1K -e 4K -f 4 -n 2 -w 1 -d bfloat16 -o "
      "avg");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("3 emulated ranks") && Contains("bfloat16") && Contains("avg"));
  CHECK_THAT(r.out, Contains("Out of bounds values : 0 OK"));
}

TEST_CASE("perf on the emulator with --topology runs and labels the tuner's choice", "[cli]") {
  // One owner of "which algorithm": the emulator runs what the prediction beside it chose (NVLS
  // for a 2 MiB all_reduce on dgx-h100, ring/LL for small ones), and the row says so.
  Result r = twinccl(
      "perf all_reduce --backend emu --topology dgx-h100 -b 512 -e 2M -f 64 -n 1 -w 0 --format "
      "json");
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["rows"].size() == 3);
  for (const auto& row : j["rows"]) {
    const std::string choice = row["predicted"]["choice"];
    CHECK(choice.substr(0, choice.find('/')) == row["algorithm"]);
    CHECK(row["out_of_place"]["wrong"] == 0);
  }
  CHECK(j["rows"][2]["algorithm"] == "nvls");
  // Without a topology the emulator's own default, named as such in the header.
  Result plain = twinccl("perf all_reduce --backend emu --ranks 4 -b 1K -e 1K -n 1 -w 0");
  REQUIRE(plain.exit_code == 0);
  CHECK_THAT(plain.out, Contains("default (ring where it exists, else direct)"));
}

TEST_CASE("perf --links and --trace", "[cli]") {
  std::string trace = "cli_trace_test.json";
  Result r = twinccl(
      "perf all_reduce -b 16M -e 16M --algo ring --proto Simple -c 0 --links --trace " + trace);
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out,
             Contains("busiest links") && Contains("nvswitch") && Contains("written to " + trace));
  std::FILE* f = std::fopen(trace.c_str(), "r");
  REQUIRE(f != nullptr);
  std::fclose(f);
  std::remove(trace.c_str());
}

TEST_CASE("usage errors exit with 2 and say what is wrong", "[cli]") {
  CHECK(twinccl("perf all_reduce --topology no-such-machine").exit_code == 2);
  CHECK_THAT(twinccl("perf all_reduce --topology no-such-machine").out,
             Contains("no-such-machine") && Contains("dgx-h100"));
  Result algo = twinccl("perf all_gather --algo bogus");
  CHECK(algo.exit_code == 2);
  CHECK_THAT(algo.out, Contains("--algo (or TWINCCL_ALGO) 'bogus'") && Contains("ring"));
  CHECK(twinccl("perf all_reduce --algo nvls --topology pcie-4gpu -c 0").exit_code == 2);
  CHECK(twinccl("perf all_reduce -b 1G -e 1K").exit_code == 2);
  CHECK(twinccl("perf all_reduce -b 12Q").exit_code == 2);
  CHECK(twinccl("perf not_a_collective").exit_code == 2);
  CHECK(twinccl("perf all_gather -b 4 -e 16 -c 0").exit_code == 2);  // never one element per rank
  CHECK(twinccl("perf --format xml").exit_code == 2);
  CHECK(twinccl("topo show").exit_code == 2);
}

TEST_CASE("topo list, show and check", "[cli]") {
  Result list = twinccl("topo list");
  REQUIRE(list.exit_code == 0);
  CHECK_THAT(list.out, Contains("dgx-h100") && Contains("pcie-4gpu") &&
                           Contains("h100-cluster-N") && Contains("torus"));
  Result show = twinccl("topo show dgx-h100");
  REQUIRE(show.exit_code == 0);
  CHECK_THAT(show.out, Contains("gpu"));
  Result bad = twinccl("topo check /nonexistent/file.json");
  CHECK(bad.exit_code == 2);
  CHECK_THAT(bad.out, Contains("file.json"));
}

TEST_CASE("algo lists every collective's algorithms", "[cli]") {
  Result r = twinccl("algo all_reduce");
  REQUIRE(r.exit_code == 0);
  CHECK_THAT(r.out, Contains("ring") && Contains("[default]"));
  CHECK(twinccl("perf all_reduce --algo help").exit_code == 0);
}
