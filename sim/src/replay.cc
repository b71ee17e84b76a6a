// replay(): lower the trace, play it in one SimGrid simulation (a child process), and turn the
// times into per-operation and per-rank results, link loads and a timeline.
//
// How it works. Per rank: compute = sum of compute events; exposed communication = time blocked
// in waits; communication = the union of [issue, end] of its ops (some op outstanding); overlapped
// = communication - exposed, i.e. the part of it during which the rank computed. An operation
// starts when its last rank arrived and ends when its last rank finished it.
#include "twinccl/sim/replay.h"

#include <algorithm>
#include <map>

#include "flow_build.h"
#include "model.h"
#include "replay_build.h"
#include "simgrid_run.h"
#include "twinccl/algorithms.h"
#include "twinccl/errors.h"
#include "twinccl/perf_math.h"

namespace twinccl::sim {
namespace {

double gpu_flops_per_second(const topo::Topology& topology, const ReplayOptions& options) {
  if (options.compute_tflops > 0.0) return options.compute_tflops * 1e12;
  switch (topology.summary().arch) {
    case topo::GpuArch::ampere:
      return 312e12;
    case topo::GpuArch::hopper:
      return 989e12;
    case topo::GpuArch::blackwell:
      return 2250e12;
    case topo::GpuArch::cdna3:  // MI300X dense BF16 peak (AMD's datasheet: 1307.4 TFLOP/s)
      return 1307e12;
    case topo::GpuArch::cdna4:  // MI355X dense BF16 peak (AMD: 2.5 PFLOP/s)
      return 2500e12;
    case topo::GpuArch::unknown:
      break;
  }
  return 100e12;
}

double op_bytes(const TraceOp& op, int nranks) {
  const OpKind kind = op.kind == OpKind::barrier ? OpKind::all_reduce : op.kind;
  if (is_uneven(kind)) {
    double elements = 0.0;
    for (std::size_t c : op.counts) elements += static_cast<double>(c);
    return elements * static_cast<double>(size_of(op.dtype));
  }
  return algbw_bytes(kind, op.kind == OpKind::barrier ? 0 : op.count, op.dtype, nranks);
}

std::string short_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024.0 && u < 4) {
    b /= 1024.0;
    ++u;
  }
  char text[32];
  std::snprintf(text, sizeof text,
                b == static_cast<double>(static_cast<long long>(b)) ? "%.0f %s" : "%.1f %s", b,
                units[u]);
  return text;
}

// Length of the union of intervals.
double union_length(std::vector<std::pair<double, double>> spans) {
  std::sort(spans.begin(), spans.end());
  double total = 0.0, start = 0.0, end = -1.0;
  for (const auto& [s, e] : spans) {
    if (s > end) {
      if (end > start) total += end - start;
      start = s;
      end = e;
    } else {
      end = std::max(end, e);
    }
  }
  if (end > start) total += end - start;
  return total;
}

}  // namespace

double ReplayResult::overlap_fraction() const {
  double comm = 0.0, overlapped = 0.0;
  for (const ReplayRank& r : ranks) {
    comm += r.comm_us;
    overlapped += r.overlapped_us;
  }
  return comm > 0.0 ? overlapped / comm : 0.0;
}

double ReplayResult::mean_exposed_comm_us() const {
  double total = 0.0;
  for (const ReplayRank& r : ranks) total += r.exposed_comm_us;
  return ranks.empty() ? 0.0 : total / static_cast<double>(ranks.size());
}

ReplayResult replay(const Trace& trace, const topo::Topology& topology,
                    const ReplayOptions& options) {
  const detail::MatchedTrace matched = detail::check_and_match(trace, "<trace>");
  const int n = trace.world_size();
  if (!(options.compute_scale >= 0.0 && options.compute_scale <= 1e6)) {
    throw InvalidArgument("trace replay: compute_scale must be within 0..1e6, got " +
                          std::to_string(options.compute_scale));
  }
  if (!(options.compute_tflops >= 0.0 && options.compute_tflops <= 1e9)) {
    throw InvalidArgument("trace replay: compute_tflops must be within 0..1e9, got " +
                          std::to_string(options.compute_tflops));
  }
  for (std::size_t r = 0; r < options.rank_compute_slowdown.size(); ++r) {
    const double s = options.rank_compute_slowdown[r];
    if (!(s >= 1.0 && s <= 1e6)) {
      throw InvalidArgument("trace replay: rank_compute_slowdown[" + std::to_string(r) +
                            "] must be within 1..1e6, got " + std::to_string(s));
    }
  }
  if (!options.algorithm.empty()) {
    // Forced "where it exists": a name no collective has (a typo) would force nothing, silently.
    try {
      (void)detail::traits_of(options.algorithm);
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(std::string("trace replay: ") + e.what());
    }
  }
  if (topology.gpu_count() < n) {
    throw InvalidArgument("trace replay: the trace has " + std::to_string(n) +
                          " ranks but topology '" + topology.name() + "' has " +
                          std::to_string(topology.gpu_count()) + " GPUs");
  }
  const auto stop_if_asked = [&] {
    if (options.stop_requested && options.stop_requested())
      throw AbortedError("trace replay: stopped on request");
  };
  stop_if_asked();
  detail::ReplayProgram program;
  std::vector<detail::InstanceInfo> info;
  detail::build_replay_program(trace, matched, topology, options,
                               gpu_flops_per_second(topology, options), program, info);
  stop_if_asked();
  const std::vector<double> t =
      detail::run_in_child([&] { return detail::play_replay_with_simgrid(program); },
                           program.time_values(), "trace replay", "", options.stop_requested);
  const auto member_time = [&](int m, int which) {
    return t[3 * static_cast<std::size_t>(m) + static_cast<std::size_t>(which)] * 1e6;
  };

  ReplayResult result;
  result.topology = topology.name();
  result.program = trace.program;
  // Operations.
  for (std::size_t i = 0; i < program.instances.size(); ++i) {
    const detail::ReplayInstance& inst = program.instances[i];
    const TraceOp& op = *info[i].first;
    const TraceCommunicator& comm = trace.communicators[static_cast<std::size_t>(op.comm)];
    ReplayOp r;
    r.comm = comm.name;
    r.comm_index = op.comm;
    r.seq = op.seq;
    r.kind = op.kind;
    r.algorithm = info[i].algorithm;
    r.protocol = info[i].protocol;
    r.nranks = is_p2p(op.kind) ? 2 : static_cast<int>(comm.ranks.size());
    r.bytes = op_bytes(op, r.nranks);
    r.bulk = info[i].bulk;
    r.start_us = member_time(inst.members.front(), 1);
    for (int m : inst.members) r.end_us = std::max(r.end_us, member_time(m, 2));
    result.ops.push_back(std::move(r));
  }
  std::stable_sort(result.ops.begin(), result.ops.end(),
                   [](const ReplayOp& a, const ReplayOp& b) { return a.start_us < b.start_us; });
  // Ranks and timeline.
  std::size_t base = 3 * program.members.size();
  result.ranks.resize(static_cast<std::size_t>(n));
  std::vector<std::vector<std::pair<double, double>>> comm_spans(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    ReplayRank& rr = result.ranks[static_cast<std::size_t>(r)];
    const auto& events = program.rank_events[static_cast<std::size_t>(r)];
    for (std::size_t e = 0; e < events.size(); ++e, base += 2) {
      const double s = t[base] * 1e6, end = t[base + 1] * 1e6;
      rr.end_us = std::max(rr.end_us, end);
      const detail::ReplayEvent& ev = events[e];
      if (ev.kind == detail::ReplayEventKind::compute) {
        rr.compute_us += end - s;
        if (end > s) result.timeline.push_back({r, "compute", "compute", s, end});
      } else if (ev.kind == detail::ReplayEventKind::wait) {
        rr.exposed_comm_us += end - s;
        if (end > s) {
          const TraceOp& op =
              *info[static_cast<std::size_t>(
                        program.members[static_cast<std::size_t>(ev.member)].instance)]
                   .first;
          result.timeline.push_back({r, "wait", "wait " + std::string(name(op.kind)), s, end});
        }
      } else {
        const int m = ev.member;
        comm_spans[static_cast<std::size_t>(r)].push_back({s, member_time(m, 2)});
        const int inst = program.members[static_cast<std::size_t>(m)].instance;
        const TraceOp& op = *info[static_cast<std::size_t>(inst)].first;
        const TraceCommunicator& comm = trace.communicators[static_cast<std::size_t>(op.comm)];
        const int nr = is_p2p(op.kind) ? 2 : static_cast<int>(comm.ranks.size());
        result.timeline.push_back({r, "comm " + comm.name,
                                   std::string(name(op.kind)) + " " + short_bytes(op_bytes(op, nr)),
                                   member_time(m, 1), member_time(m, 2)});
      }
    }
    rr.comm_us = union_length(comm_spans[static_cast<std::size_t>(r)]);
    rr.overlapped_us = std::max(0.0, rr.comm_us - rr.exposed_comm_us);
    result.total_us = std::max(result.total_us, rr.end_us);
  }
  const std::vector<double> repeats(program.flow.transfers.size(), 1.0);
  result.links = detail::link_loads(topology, program.flow, repeats, result.total_us * 1e-6);
  return result;
}

}  // namespace twinccl::sim
