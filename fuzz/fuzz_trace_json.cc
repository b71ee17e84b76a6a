// Fuzz target: a trace file (docs/traces.md) parsed and checked from bytes in memory, as
// load_trace does after reading the file (trace_from_json: JSON, caps, types, ranges, per-rank
// order of issues and waits, groups, cross-rank pairing, collective order, the deadlock dry run).
// Accepted: a Trace, or a typed twinccl::Error with a bounded message. A trace that is accepted
// must survive a round trip (to_json, then trace_from_json again, equal). SimGrid is not run:
// what replay would do with an accepted trace is decided by those checks.
//
//   fuzz_trace_json --seconds 8 fuzz/corpus/trace_json
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "fuzz_support.h"
#include "twinccl/sim/replay_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return twinccl::fuzz::expect_typed_errors([&] {
    const twinccl::sim::Trace trace =
        twinccl::sim::trace_from_json(twinccl::fuzz::as_text(data, size), "fuzz.json");
    if (!(twinccl::sim::trace_from_json(twinccl::sim::to_json(trace), "round-trip.json") ==
          trace)) {
      std::fprintf(stderr, "fuzz_trace_json: an accepted trace changed in a JSON round trip\n");
      std::abort();
    }
  });
}
