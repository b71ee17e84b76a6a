// Replay: simulated time of a recorded program (a Trace) on a Topology, in ONE SimGrid flow
// simulation, so operations of different communicators that run at once share links and slow
// each other down, as on a real machine.
//
//   sim::ReplayResult r = sim::replay(sim::load_trace("step.trace.json"), topo::dgx_h100());
//   std::cout << sim::summarize_replay(r);           // per rank, per op, overlap, busiest links
//   std::ofstream f("step.perfetto.json"); sim::write_replay_perfetto(r, f);
//
// Semantics (docs/traces.md): each rank runs its events in order; compute takes its time; an op
// is issued and the rank goes on; the rank blocks only at a wait. On each rank an op waits for the
// previous op of the same communicator (one stream per communicator; ops of one group run
// together); it starts when every rank of its communicator reached it (send/recv: both ends), and
// its transfers follow the algorithm's schedule with NCCL's software latencies (as
// simulate_flow). Every rank waits for all it issued at the end.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "twinccl/sim/flow_report.h"
#include "twinccl/sim/replay_trace.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/topology.h"

namespace twinccl::sim {

struct ReplayOptions {
  // unset = the tuner's choice; set: used by every collective whose algorithm runs it
  std::optional<Protocol> protocol;
  bool software_latency = true;  // NCCL's base and per-hop latencies (as simulate_flow)
  // "" = each op's recorded algorithm, else the communicator's Tuner's choice (tuner.h); set:
  // forced for every collective it exists for (an error where it does not apply)
  std::string algorithm;
  // Declared seconds are multiplied by this (a faster or slower GPU than the one measured).
  double compute_scale = 1.0;
  // Declared flops run at this rate; 0 = the topology's GPU: dense BF16 peak, ampere 312,
  // hopper 989, blackwell 2250, cdna3 1307, cdna4 2500, unknown 100 TFLOP/s [assumed: peak, no
  // efficiency factor].
  double compute_tflops = 0.0;
  // Per world rank (rank r plays GPU r): its compute takes this many times as long, >= 1 (a GPU
  // degraded to 50% by a what-if, topology_edit.h, is 2). Ranks past the end: 1.
  std::vector<double> rank_compute_slowdown;
  // Ring all_reduce/reduce_scatter/all_gather over more ranks than this are played as one bulk
  // flow per rank (bytes of all steps, latency of all steps) instead of step by step.
  int bulk_ring_above_ranks = 64;
  // Asked between the replay's phases and about every 50 ms while the simulation runs: true stops
  // it (the simulation's child process is killed) and replay() throws AbortedError. For a caller
  // that must react to Ctrl-C (twinccl.run's Python binding); empty = never stopped.
  std::function<bool()> stop_requested;
};

// One operation (all ranks of it together).
struct ReplayOp {
  std::string comm;  // communicator name
  int comm_index = 0;
  std::uint64_t seq = 0;
  OpKind kind = OpKind::all_reduce;
  std::string algorithm;  // as played ("p2p" for send/recv)
  Protocol protocol = Protocol::simple;
  int nranks = 1;
  double bytes = 0.0;     // nccl-tests' bytes (perf_math.h)
  double start_us = 0.0;  // every rank reached it
  double end_us = 0.0;    // the last rank finished it
  bool bulk = false;      // played as bulk ring flows
  double time_us() const { return end_us - start_us; }
};

// What one rank did, in simulated time.
struct ReplayRank {
  double end_us = 0.0;           // its last event (all its ops waited for)
  double compute_us = 0.0;       // computing
  double comm_us = 0.0;          // with at least one op issued and not complete
  double exposed_comm_us = 0.0;  // blocked in a wait
  double overlapped_us = 0.0;    // comm_us - exposed_comm_us: communication hidden by compute
};

// A slice of the timeline: track "compute", "wait" or "comm <name>".
struct ReplaySlice {
  int rank = 0;
  std::string track;
  std::string name;
  double start_us = 0.0, end_us = 0.0;
};

struct ReplayResult {
  std::string topology;
  std::string program;
  double total_us = 0.0;  // the last rank's end
  std::vector<ReplayRank> ranks;
  std::vector<ReplayOp> ops;          // every operation, by start time
  std::vector<LinkLoad> links;        // every link direction used, busiest first
  std::vector<ReplaySlice> timeline;  // compute, waits and per-rank op spans
  // Sum over ranks of overlapped / comm (0 when nothing was communicated).
  double overlap_fraction() const;
  double mean_exposed_comm_us() const;
};

// Throws ConfigError when the trace is malformed or inconsistent (ranks disagree about an op,
// a send has no matching recv), InvalidArgument when the topology has fewer GPUs than the trace
// has ranks or an algorithm does not apply; rank r runs on the topology's GPU rank r.
ReplayResult replay(const Trace& trace, const topo::Topology& topology,
                    const ReplayOptions& options = {});

// Text for people: total time, per rank (every rank up to 16, else min/mean/max), per operation
// group (communicator, kind, bytes: count, mean time), overlap, the `top_links` busiest links.
std::string summarize_replay(const ReplayResult& result, std::size_t top_links = 5);
// replay() then summarize_replay(): what the emulator prints at exit when TWINCCL_TOPOLOGY is set.
std::string summarize_replay(const Trace& trace, const topo::Topology& topology,
                             const ReplayOptions& options = {});

// Chrome/Perfetto Trace Event JSON: one process per rank ("rank R"), threads "compute",
// "wait" and one per communicator; complete slices in microseconds. Open at ui.perfetto.dev.
void write_replay_perfetto(const ReplayResult& result, std::ostream& out);

}  // namespace twinccl::sim
