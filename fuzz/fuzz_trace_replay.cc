// Fuzz target: a trace file (docs/traces.md) parsed and then replayed, as `twinccl replay T.json
// -t dgx-h100 --links --trace out.json` does: trace_from_json, replay on the 8-GPU dgx-h100
// preset (SimGrid, in a forked child, sim/src/child_process.cc), the summary with its busiest
// links and the Perfetto timeline. The first byte picks the replay's options (bit 0: protocol
// LL, bit 1: ring forced where it exists, bit 2: bulk ring flows above 2
// ranks, bit 3: a rank 3x slower, bits 4-5: halving_doubling, bruck or tree forced instead
// (the what-if algorithms' grouped steps), bit 6: h100-cluster-2, 16 GPUs on two nodes, instead
// of dgx-h100), the rest is the trace. Accepted: a finite, non-negative
// prediction, or a typed twinccl::Error with a bounded message.
//
//   fuzz_trace_replay --seconds 8 fuzz/corpus/trace_replay
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "fuzz_support.h"
#include "twinccl/sim/replay.h"
#include "twinccl/sim/replay_trace.h"
#include "twinccl/topologies/presets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const twinccl::topo::Topology one_node = twinccl::topo::load_topology("dgx-h100");
  static const twinccl::topo::Topology two_nodes = twinccl::topo::load_topology("h100-cluster-2");
  const twinccl::topo::Topology& topology = (data[0] & 64) != 0 ? two_nodes : one_node;
  return twinccl::fuzz::expect_typed_errors([&] {
    const uint8_t flags = data[0];
    const twinccl::sim::Trace trace =
        twinccl::sim::trace_from_json(twinccl::fuzz::as_text(data + 1, size - 1), "fuzz.json");
    twinccl::sim::ReplayOptions options;
    if ((flags & 1) != 0) options.protocol = twinccl::sim::Protocol::ll;
    if ((flags & 2) != 0) options.algorithm = "ring";
    if ((flags & 4) != 0) options.bulk_ring_above_ranks = 2;
    if ((flags & 8) != 0) options.rank_compute_slowdown = {1.0, 3.0};
    static const char* const kForced[] = {"", "halving_doubling", "bruck", "tree"};
    if (((flags >> 4) & 3) != 0) options.algorithm = kForced[(flags >> 4) & 3];
    const twinccl::sim::ReplayResult result = twinccl::sim::replay(trace, topology, options);
    if (!(std::isfinite(result.total_us) && result.total_us >= 0.0)) {
      std::fprintf(stderr, "fuzz_trace_replay: total %g us\n", result.total_us);
      std::abort();
    }
    std::ostringstream out;
    out << twinccl::sim::summarize_replay(result, 10);
    twinccl::sim::write_replay_perfetto(result, out);
  });
}
