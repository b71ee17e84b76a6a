// Traces: what an emulated program communicated and computed, per rank and in order, as data and
// as a versioned JSON file (docs/traces.md). The emulator records them (twinccl/trace/recorder.h);
// the simulator replays them on any topology (twinccl/sim/replay.h).
//
//   sim::Trace t = sim::load_trace("step.trace.json");      // ConfigError naming file and field
//   sim::ReplayResult r = sim::replay(t, topo::load_topology("dgx-h100"));
//   sim::save_trace(t, "copy.trace.json");
//
// The data model and the file are the trace library's (twinccl/trace/); what a replay needs
// beyond the file's shape (check_trace) is the simulator's.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "twinccl/trace/trace.h"

namespace twinccl::sim {

// The trace's data model and file are the trace library's (twinccl/trace/trace.h,
// twinccl/trace/trace_file.h); sim names them as it always did.
using trace::kMaxComputeFlops;
using trace::kMaxComputeSeconds;
using trace::kMaxTraceCommMembers;
using trace::kMaxTraceCommunicators;
using trace::kMaxTraceEvents;
using trace::kMaxTraceFileBytes;
using trace::kMaxTraceNameBytes;
using trace::kMaxTraceOpBytes;
using trace::kMaxTraceOps;
using trace::kMaxTraceProgramBytes;
using trace::kMaxTraceRanks;
using trace::kMaxTraceWallSeconds;
using trace::kTraceFormatVersion;
using trace::op_label;
using trace::RankTrace;
using trace::Trace;
using trace::TraceCommunicator;
using trace::TraceEvent;
using trace::TraceEventKind;
using trace::TraceOp;

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

// JSON (docs/traces.md): trace::to_json.
std::string to_json(const Trace& trace);
// Parses (trace::from_json) and checks (check_trace) a trace held in memory; load_trace reads the
// file (trace::load) and checks it. Throws ConfigError naming `source`, the JSON path and the
// problem (DeadlockError as check_trace); a file of another version says which version it has and
// which this TwinCCL reads.
Trace trace_from_json(std::string_view text, std::string_view source = "<json>");
Trace load_trace(const std::filesystem::path& path);
void save_trace(const Trace& trace, const std::filesystem::path& path);

}  // namespace twinccl::sim
