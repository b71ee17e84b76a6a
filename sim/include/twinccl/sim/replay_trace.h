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

// Caps on what one trace may hold (check_trace refuses more with a ConfigError stating the cap).
// They leave room for 10x bench/bench_replay_scale (1024 ranks x 100 collectives, ~100k ops) and
// keep a hostile file from taking gigabytes or hours: a 10^6-op trace loads in seconds.
inline constexpr int kMaxTraceRanks = 65536;
inline constexpr std::size_t kMaxTraceOps = std::size_t{1} << 20;           // all ranks together
inline constexpr std::size_t kMaxTraceEvents = std::size_t{4} << 20;        // all ranks together
inline constexpr std::size_t kMaxTraceCommunicators = 65536;
inline constexpr std::size_t kMaxTraceCommMembers = std::size_t{4} << 20;   // sum of ranks lists
inline constexpr std::size_t kMaxTraceFileBytes = std::size_t{256} << 20;   // 256 MiB of JSON
inline constexpr std::size_t kMaxTraceNameBytes = 256;      // communicator names, algorithms
inline constexpr std::size_t kMaxTraceProgramBytes = 4096;  // the free-text "program"
inline constexpr double kMaxTraceOpBytes = 1099511627776.0;  // 1 TiB moved by one rank's op
inline constexpr double kMaxComputeSeconds = 1e6;            // one compute event (~11.6 days)
inline constexpr double kMaxComputeFlops = 1e21;             // one compute event (~17 min at 1 EFLOP/s)
inline constexpr double kMaxTraceWallSeconds = 1e9;          // issue_s, complete_s

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

// Everything replay needs of a trace, checked before any simulation (trace_check.cc,
// trace_analysis.cc). Per rank: communicator and op indices, ranks in range, members listing
// themselves, the caps above, finite numbers in range, every op issued once, waits after their
// issue, a group's ops issued together before any of them is waited. Across ranks: every op has
// its counterparts (all ranks of a collective, the recv of a send) and they agree (kind, count,
// dtype, root, counts), every rank issues a communicator's collectives in the same order, and a
// dry run of the replay's rules (streams, groups, waits) ends: a trace that would deadlock throws
// DeadlockError naming the stuck rank, the op it waits for and why that op cannot start.
// Everything else throws ConfigError naming `source`, the rank, event or op and the value.
void check_trace(const Trace& trace, std::string_view source = "<trace>");

// JSON (docs/traces.md): {"format": "twinccl-trace", "version": 1, "program", "world_size",
// "communicators": [{"name", "ranks"}], "ranks": [{"rank", "ops": [...], "events": [...]}]}.
std::string to_json(const Trace& trace);
// Parses and checks (check_trace) a trace held in memory; load_trace reads the file and calls
// it. Throws ConfigError naming `source`, the JSON path and the problem (DeadlockError as
// check_trace); a file of another version says which version it has and which this TwinCCL reads.
Trace trace_from_json(std::string_view text, std::string_view source = "<json>");
Trace load_trace(const std::filesystem::path& path);
void save_trace(const Trace& trace, const std::filesystem::path& path);

}  // namespace twinccl::sim
