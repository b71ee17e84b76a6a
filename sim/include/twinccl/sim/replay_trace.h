// Traces: what an emulated program communicated and computed, per rank and in order, as data and
// as a versioned JSON file (docs/traces.md). The emulator records them (twinccl/emu/trace.h);
// the simulator replays them on any topology (twinccl/sim/replay.h).
//
//   sim::Trace t = sim::load_trace("step.trace.json");      // ConfigError naming file and field
//   sim::ReplayResult r = sim::replay(t, topo::load_topology("dgx-h100"));
//   sim::save_trace(t, "copy.trace.json");
//
// The trace lives in sim (not emu) because the simulator reads it and sim does not know emu.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "twinccl/data_type.h"
#include "twinccl/operation.h"

namespace twinccl::sim {

// The file format's version; files of another version are refused with a clear error.
inline constexpr int kTraceFormatVersion = 1;

// One communicator: its name and the world rank of each of its ranks (comm rank i = ranks[i]).
struct TraceCommunicator {
  std::string name;
  std::vector<int> ranks;
  friend bool operator==(const TraceCommunicator&, const TraceCommunicator&) = default;
};

// One operation as one rank issued it.
struct TraceOp {
  int comm = 0;            // index into Trace::communicators
  std::uint64_t seq = 0;   // collectives: the comm's collective number (equal on every rank);
                           // send/recv: the k-th between this pair in this direction
  OpKind kind = OpKind::all_reduce;
  std::size_t count = 0;   // NCCL's count (operation.h)
  DataType dtype = DataType::float32;
  int root = -1;           // rooted collectives: comm rank
  int peer = -1;           // send/recv: comm rank
  std::vector<std::size_t> counts;  // uneven variants: per-rank counts (all_to_all_v: n*n)
  std::string algorithm;   // as it ran; "" = the default (algorithms.h)
  bool async = false;      // informational: waits are explicit events
  int group = 0;           // ops of one group_start/end on a rank share one id > 0
  double issue_s = -1.0;   // wall time since recording began (-1 = unknown); informational
  double complete_s = -1.0;
  friend bool operator==(const TraceOp&, const TraceOp&) = default;
};

enum class TraceEventKind : std::uint8_t {
  op,       // issue RankTrace::ops[op]; the rank goes on at once
  wait,     // the rank blocks until RankTrace::ops[op] completed
  compute,  // the rank computes for `seconds` plus `flops` at the replay's GPU rate
};

struct TraceEvent {
  TraceEventKind kind = TraceEventKind::compute;
  int op = -1;
  double seconds = 0.0;
  double flops = 0.0;
  friend bool operator==(const TraceEvent&, const TraceEvent&) = default;
};

// A blocking call is an op event followed by a wait event; an async one is waited later (or at
// the end of the trace, where every rank waits for all it issued).
struct RankTrace {
  std::vector<TraceOp> ops;
  std::vector<TraceEvent> events;
  friend bool operator==(const RankTrace&, const RankTrace&) = default;
};

struct Trace {
  int version = kTraceFormatVersion;
  std::string program;  // free text: what was run
  std::vector<TraceCommunicator> communicators;
  std::vector<RankTrace> ranks;  // one per world rank
  int world_size() const { return static_cast<int>(ranks.size()); }
  friend bool operator==(const Trace&, const Trace&) = default;
};

// Structure checks (communicator and op indices, ranks in range, members listing themselves,
// counts and compute >= 0). Throws ConfigError naming `source`, the rank, event and value.
void check_trace(const Trace& trace, std::string_view source = "<trace>");

// JSON (docs/traces.md): {"format": "twinccl-trace", "version": 1, "program", "world_size",
// "communicators": [{"name", "ranks"}], "ranks": [{"rank", "ops": [...], "events": [...]}]}.
std::string to_json(const Trace& trace);
// Throws ConfigError naming `source`, the JSON path and the problem; a file of another version
// says which version it has and which this TwinCCL reads.
Trace trace_from_json(std::string_view text, std::string_view source = "<json>");
Trace load_trace(const std::filesystem::path& path);
void save_trace(const Trace& trace, const std::filesystem::path& path);

}  // namespace twinccl::sim
