// check_trace, per rank: caps, indices, ranges, numbers, and the order of issues and waits.
//
// How it works. One pass over the communicators (ranks in range, no duplicates, the caps), then
// one pass over each rank's ops (communicator membership through a per-rank sorted list of
// (communicator, comm rank), peer/root in range, bytes within kMaxTraceOpBytes computed without
// overflow) and events (compute finite and in range; every op issued exactly once; a wait only
// after its op's issue; a group's ops issued one after another, none waited before the last is
// issued). The cross-rank checks follow (trace_analysis.cc). Every message names the source and
// the place ("t.json: ranks[3].events[7]: ...") and is bounded: names are capped, values printed
// as numbers.
#include <algorithm>
#include <cmath>
#include <map>

#include "trace_analysis.h"
#include "twinccl/errors.h"
#include "twinccl/sim/replay_trace.h"

namespace twinccl::sim {
namespace {

[[noreturn]] void fail(std::string_view source, const std::string& path, const std::string& what) {
  throw ConfigError(std::string(source) + ": " + path + ": " + what);
}

std::string where(int rank, const char* what, std::size_t i) {
  return "ranks[" + std::to_string(rank) + "]." + what + "[" + std::to_string(i) + "]";
}

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

void check_name(std::string_view source, const std::string& path, const std::string& name,
                std::size_t cap) {
  if (name.size() > cap) {
    fail(source, path,
         "is " + std::to_string(name.size()) + " bytes long; the cap is " + std::to_string(cap));
  }
}

void check_caps(const Trace& trace, std::string_view source) {
  if (trace.version != kTraceFormatVersion) {
    fail(source, "version",
         "is " + std::to_string(trace.version) + "; this TwinCCL reads version " +
             std::to_string(kTraceFormatVersion));
  }
  if (trace.ranks.empty()) fail(source, "world_size", "the trace has no ranks");
  if (trace.ranks.size() > static_cast<std::size_t>(kMaxTraceRanks)) {
    fail(source, "world_size",
         std::to_string(trace.ranks.size()) + " ranks is over the cap of " +
             std::to_string(kMaxTraceRanks) + " ranks per trace");
  }
  if (trace.communicators.size() > kMaxTraceCommunicators) {
    fail(source, "communicators",
         std::to_string(trace.communicators.size()) + " communicators is over the cap of " +
             std::to_string(kMaxTraceCommunicators));
  }
  check_name(source, "program", trace.program, kMaxTraceProgramBytes);
  std::size_t ops = 0, events = 0, members = 0;
  for (const RankTrace& rt : trace.ranks) {
    ops += rt.ops.size();
    events += rt.events.size();
  }
  for (const TraceCommunicator& c : trace.communicators) members += c.ranks.size();
  if (ops > kMaxTraceOps) {
    fail(source, "ranks",
         std::to_string(ops) + " operations is over the cap of " + std::to_string(kMaxTraceOps) +
             " operations per trace (all ranks together); replay a shorter window");
  }
  if (events > kMaxTraceEvents) {
    fail(source, "ranks",
         std::to_string(events) + " events is over the cap of " + std::to_string(kMaxTraceEvents) +
             " events per trace (all ranks together); replay a shorter window");
  }
  if (members > kMaxTraceCommMembers) {
    fail(source, "communicators",
         "their ranks lists hold " + std::to_string(members) + " entries, over the cap of " +
             std::to_string(kMaxTraceCommMembers));
  }
}

// Per world rank: (communicator, comm rank) for every communicator it belongs to, by communicator.
std::vector<std::vector<std::pair<int, int>>> check_communicators(const Trace& trace,
                                                                  std::string_view source) {
  const int n = trace.world_size();
  std::vector<std::vector<std::pair<int, int>>> membership(static_cast<std::size_t>(n));
  for (std::size_t c = 0; c < trace.communicators.size(); ++c) {
    const TraceCommunicator& comm = trace.communicators[c];
    const std::string path = "communicators[" + std::to_string(c) + "]";
    check_name(source, path + ".name", comm.name, kMaxTraceNameBytes);
    if (comm.ranks.empty()) fail(source, path + " '" + comm.name + "'", "has no ranks");
    for (std::size_t i = 0; i < comm.ranks.size(); ++i) {
      const int r = comm.ranks[i];
      if (r < 0 || r >= n) {
        fail(source, path + ".ranks",
             "world rank " + std::to_string(r) + " is outside 0.." + std::to_string(n - 1));
      }
      auto& list = membership[static_cast<std::size_t>(r)];
      if (!list.empty() && list.back().first == static_cast<int>(c)) {
        fail(source, path + ".ranks", "lists rank " + std::to_string(r) + " twice");
      }
      list.emplace_back(static_cast<int>(c), static_cast<int>(i));
    }
  }
  return membership;
}

// Bytes one rank's op moves at most (count, or every per-rank count), compared without overflow.
void check_op_size(std::string_view source, const std::string& path, const TraceOp& op,
                   int comm_size) {
  const double element = static_cast<double>(size_of(op.dtype));
  const double max_elements = kMaxTraceOpBytes / element;
  const auto over = [&](double elements, const std::string& what) {
    if (elements > max_elements) {
      fail(source, path + "." + what,
           number(elements) + " elements of " + std::string(name(op.dtype)) +
               " is over the cap of " + number(kMaxTraceOpBytes) + " bytes per operation");
    }
  };
  over(static_cast<double>(op.count), "count");
  if (op.counts.size() > static_cast<std::size_t>(comm_size)) {
    fail(source, path + ".counts",
         "has " + std::to_string(op.counts.size()) + " entries; the communicator has " +
             std::to_string(comm_size) + " ranks");
  }
  double total = 0.0;
  for (std::size_t c : op.counts) total += static_cast<double>(c);
  over(total, "counts");
}

void check_ops(const Trace& trace, std::string_view source, int r,
               const std::vector<std::pair<int, int>>& membership) {
  const RankTrace& rt = trace.ranks[static_cast<std::size_t>(r)];
  for (std::size_t i = 0; i < rt.ops.size(); ++i) {
    const TraceOp& op = rt.ops[i];
    const std::string path = where(r, "ops", i) + " (" + std::string(name(op.kind)) + ")";
    if (op.comm < 0 || static_cast<std::size_t>(op.comm) >= trace.communicators.size()) {
      fail(source, path + ".comm",
           std::to_string(op.comm) + " is not a communicator index (0.." +
               std::to_string(static_cast<long>(trace.communicators.size()) - 1) + ")");
    }
    const TraceCommunicator& comm = trace.communicators[static_cast<std::size_t>(op.comm)];
    const auto it =
        std::lower_bound(membership.begin(), membership.end(), std::make_pair(op.comm, -1));
    if (it == membership.end() || it->first != op.comm) {
      fail(source, path + ".comm",
           "rank " + std::to_string(r) + " is not a member of '" + comm.name + "'");
    }
    const int size = static_cast<int>(comm.ranks.size());
    if ((is_p2p(op.kind) && op.peer < 0) || op.peer < -1 || op.peer >= size) {
      fail(source, path + ".peer",
           std::to_string(op.peer) + " is outside 0.." + std::to_string(size - 1));
    }
    if ((is_rooted(op.kind) && op.root < 0) || op.root < -1 || op.root >= size) {
      fail(source, path + ".root",
           std::to_string(op.root) + " is outside 0.." + std::to_string(size - 1));
    }
    if (op.group < 0) fail(source, path + ".group", std::to_string(op.group) + " is negative");
    check_name(source, path + ".algorithm", op.algorithm, kMaxTraceNameBytes);
    for (const double t : {op.issue_s, op.complete_s}) {
      if (t != -1.0 && !(t >= 0.0 && t <= kMaxTraceWallSeconds)) {
        fail(source, path,
             "issue_s/complete_s " + number(t) + " is outside 0.." + number(kMaxTraceWallSeconds));
      }
    }
    check_op_size(source, path, op, size);
  }
}

void check_events(const Trace& trace, std::string_view source, int r) {
  const RankTrace& rt = trace.ranks[static_cast<std::size_t>(r)];
  std::vector<char> issued(rt.ops.size(), 0);
  std::map<int, std::size_t> group_left;  // group id -> its ops not yet issued
  for (const TraceOp& op : rt.ops) {
    if (op.group > 0) ++group_left[op.group];
  }
  int open_group = 0;  // the group being issued, 0 = none
  for (std::size_t i = 0; i < rt.events.size(); ++i) {
    const TraceEvent& e = rt.events[i];
    const std::string path = where(r, "events", i);
    if (e.kind == TraceEventKind::compute) {
      if (!(e.seconds >= 0.0 && e.seconds <= kMaxComputeSeconds)) {
        fail(source, path,
             "compute must be >= 0 and <= " + number(kMaxComputeSeconds) + " s, got compute_s " +
                 number(e.seconds));
      }
      if (!(e.flops >= 0.0 && e.flops <= kMaxComputeFlops)) {
        fail(source, path,
             "compute must be >= 0 and <= " + number(kMaxComputeFlops) +
                 " flops, got compute_flops " + number(e.flops));
      }
      continue;
    }
    if (e.op < 0 || static_cast<std::size_t>(e.op) >= rt.ops.size()) {
      fail(source, path,
           "op " + std::to_string(e.op) + " is outside 0.." +
               std::to_string(static_cast<long>(rt.ops.size()) - 1));
    }
    const TraceOp& op = rt.ops[static_cast<std::size_t>(e.op)];
    const std::string what = "op " + std::to_string(e.op) + " (" + op_label(trace, op) + ")";
    char& done = issued[static_cast<std::size_t>(e.op)];
    if (e.kind == TraceEventKind::wait) {
      if (!done) fail(source, path, "waits for " + what + " before issuing it");
      if (op.group > 0 && op.group == open_group) {
        fail(source, path,
             "waits for " + what + " of group " + std::to_string(op.group) +
                 " before the group's " + std::to_string(group_left[op.group]) +
                 " other op(s) were issued (a group's ops are "
                 "issued together, then waited)");
      }
      continue;
    }
    if (done) fail(source, path, "issues " + what + " a second time");
    done = 1;
    if (open_group != 0 && op.group != open_group) {
      fail(source, path,
           "issues " + what + " while group " + std::to_string(open_group) + " still has " +
               std::to_string(group_left[open_group]) +
               " op(s) to issue (a group's ops are issued "
               "one after another)");
    }
    if (op.group > 0) open_group = --group_left[op.group] > 0 ? op.group : 0;
  }
  for (std::size_t i = 0; i < rt.ops.size(); ++i) {
    if (!issued[i]) {
      fail(source, where(r, "ops", i),
           "op " + std::to_string(i) + " (" + op_label(trace, rt.ops[i]) +
               ") is never issued in the rank's events");
    }
  }
}

}  // namespace

void check_trace(const Trace& trace, std::string_view source) {
  (void)detail::check_and_match(trace, source);
}

detail::MatchedTrace detail::check_and_match(const Trace& trace, std::string_view source) {
  check_caps(trace, source);
  const auto membership = check_communicators(trace, source);
  for (int r = 0; r < trace.world_size(); ++r) {
    check_ops(trace, source, r, membership[static_cast<std::size_t>(r)]);
    check_events(trace, source, r);
  }
  return check_trace_consistency(trace, source, membership);
}

}  // namespace twinccl::sim
