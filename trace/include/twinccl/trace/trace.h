// Traces: what a program communicated and computed, per rank and in order: one record per call
// (TraceOp) and the events of each rank (issue, wait, compute). The emulator records them
// (twinccl/trace/recorder.h), the file format reads and writes them (twinccl/trace/trace_file.h),
// the simulator replays them on any topology (twinccl/sim/replay.h). docs/traces.md.
//
//   trace::TraceOp op = trace::record_of(desc);   // the call's kind, count, dtype, root, peer...
//   op.comm = 0; op.seq = 3;                      // where and when: the recorder fills these
//   trace::Trace t = trace::load("step.trace.json");  // the file, read (sim::load_trace also
//   checks)
//
// Under core's rules: this library knows neither the emulator nor the simulator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "twinccl/data_type.h"
#include "twinccl/operation.h"

namespace twinccl::trace {

// The file format's version; files of another version are refused with a clear error.
inline constexpr int kTraceFormatVersion = 1;

// Caps on what one trace may hold (the reader and sim::check_trace refuse more with a ConfigError
// stating the cap). They leave room for 10x bench/bench_replay_scale (1024 ranks x 100
// collectives, ~100k ops) and keep a hostile file from taking gigabytes or hours: a 10^6-op trace
// loads in seconds.
inline constexpr int kMaxTraceRanks = 65536;
inline constexpr std::size_t kMaxTraceOps = std::size_t{1} << 20;     // all ranks together
inline constexpr std::size_t kMaxTraceEvents = std::size_t{4} << 20;  // all ranks together
inline constexpr std::size_t kMaxTraceCommunicators = 65536;
inline constexpr std::size_t kMaxTraceCommMembers = std::size_t{4} << 20;  // sum of ranks lists
inline constexpr std::size_t kMaxTraceFileBytes = std::size_t{256} << 20;  // 256 MiB of JSON
inline constexpr std::size_t kMaxTraceNameBytes = 256;       // communicator names, algorithms
inline constexpr std::size_t kMaxTraceProgramBytes = 4096;   // the free-text "program"
inline constexpr double kMaxTraceOpBytes = 1099511627776.0;  // 1 TiB moved by one rank's op
inline constexpr double kMaxComputeSeconds = 1e6;            // one compute event (~11.6 days)
inline constexpr double kMaxComputeFlops = 1e21;     // one compute event (~17 min at 1 EFLOP/s)
inline constexpr double kMaxTraceWallSeconds = 1e9;  // issue_s, complete_s

// One communicator: its name and the world rank of each of its ranks (comm rank i = ranks[i]).
struct TraceCommunicator {
  std::string name;
  std::vector<int> ranks;
  friend bool operator==(const TraceCommunicator&, const TraceCommunicator&) = default;
};

// One call as one rank issued it: the record of a call, for the recorder and the reader alike.
struct TraceOp {
  int comm = 0;           // index into Trace::communicators
  std::uint64_t seq = 0;  // collectives: the comm's collective number (equal on every rank);
                          // send/recv: the k-th between this pair in this direction
  OpKind kind = OpKind::all_reduce;
  std::size_t count = 0;  // NCCL's count (operation.h)
  DataType dtype = DataType::float32;
  int root = -1;                    // rooted collectives: comm rank
  int peer = -1;                    // send/recv: comm rank
  std::vector<std::size_t> counts;  // uneven variants: per-rank counts (all_to_all_v: n*n)
  std::string algorithm;            // as it ran; "" = the default (algorithms.h)
  bool async = false;               // informational: waits are explicit events
  int group = 0;                    // ops of one group_start/end on a rank share one id > 0
  double issue_s = -1.0;            // wall time since recording began (-1 = unknown); informational
  double complete_s = -1.0;
  friend bool operator==(const TraceOp&, const TraceOp&) = default;
};

// The record of the API's call description: kind, count, dtype, root (rooted collectives), peer
// (send/recv), per-rank counts (uneven variants: this rank's row of all_to_all_v), algorithm and
// async. comm, seq, group and times are the recorder's to fill.
TraceOp record_of(const OpDesc& op);
// The call a record describes, without buffers (replay builds its CollectiveSpec from it).
OpDesc desc_of(const TraceOp& op);

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
  // false: a rank's ops on one communicator ran on one stream in issue order (NCCL). true: its
  // send/recv ran on one stream per (peer, direction), groups' too (torch's ProcessGroupNCCL;
  // emu::EmulatorOptions::p2p_per_peer_streams). File field "p2p_streams": "per_peer".
  bool p2p_per_peer_streams = false;
  std::vector<TraceCommunicator> communicators;
  std::vector<RankTrace> ranks;  // one per world rank
  int world_size() const { return static_cast<int>(ranks.size()); }
  friend bool operator==(const Trace&, const Trace&) = default;
};

// "all_reduce #3 on comm 'default_pg'": how errors name a recorded op (op.comm must be valid).
std::string op_label(const Trace& trace, const TraceOp& op);

}  // namespace twinccl::trace
