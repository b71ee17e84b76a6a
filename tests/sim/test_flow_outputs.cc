// Flow outputs for the CLI: per-link loads and the Perfetto/Chrome trace.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sim_topologies.h"
#include "twinccl/sim/flow_report.h"

using namespace twinccl;
using namespace twinccl::sim;
using namespace twinccl::sim::testing;

TEST_CASE("flow outputs: ring link loads and a trace with one track per rank") {
  const int n = 4;
  const std::size_t count = 4 * 1000;
  const FlowReport rep = simulate_flow(star(n, 100.0, 0.5), ring_request(OpKind::all_reduce, count),
                                       {.record_transfers = true});
  // Every GPU sends 2(n-1) chunks of 1000 floats up its link and receives as many down.
  REQUIRE(rep.links.size() == 2 * n);
  for (const LinkLoad& l : rep.links) {
    CHECK(l.bytes == 2 * (n - 1) * 4000.0);
    CHECK(l.busy_us == Approx(l.bytes / 100e3));
    CHECK(l.utilisation > 0.0);
    CHECK(l.utilisation <= 1.0);
  }
  CHECK(busiest_links(rep, 3).size() == 3);
  REQUIRE(rep.transfers.size() == static_cast<std::size_t>(2 * (n - 1) * n));
  std::ostringstream out;
  write_trace_json(rep, out);
  const nlohmann::json doc = nlohmann::json::parse(out.str());
  int slices = 0, tracks = 0;
  for (const nlohmann::json& e : doc["traceEvents"]) {
    if (e["ph"] == "X") {
      ++slices;
      CHECK(e["dur"].get<double>() > 0.0);
      CHECK(e["ts"].get<double>() + e["dur"].get<double>() <= rep.prediction.time_us + 1e-6);
    }
    if (e["name"] == "thread_name") ++tracks;
  }
  CHECK(slices == 2 * static_cast<int>(rep.transfers.size()));
  CHECK(tracks == n);
  CHECK(doc["otherData"]["algorithm"] == "ring");
}

TEST_CASE("flow outputs: compressed rings expand their rounds into the trace, up to a limit") {
  Request r = ring_request(OpKind::all_gather, 1000);
  r.compression = RoundCompression::on;
  const FlowReport rep =
      simulate_flow(star(8, 100.0, 0.5), r, {.record_transfers = true, .max_transfers = 20});
  CHECK(rep.transfers.size() == 20);
  CHECK(rep.transfers_truncated);
  CHECK(rep.transfers[8].start_us == Approx(rep.transfers[0].end_us));
}
