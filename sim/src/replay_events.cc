// A matched trace's streams and events (replay_program.h): per rank, stream batches (one op, or
// the ops of one group on one communicator) and the rank's events as compute/issue/wait.
//
// How it works. A rank's ops on one communicator run on one stream in issue order: each batch
// starts after the stream's previous batch (previous/next links). Ops issued with the same group
// id on a communicator form one batch. Compute events take their declared seconds (x
// compute_scale) plus flops / flops_per_second, times the rank's compute slowdown (a slow GPU).
// Every op of a rank is waited for at the end, so a rank's time covers all its operations. Example,
// rank 0: issue ar(dp, async), compute 5 us, wait ar -> events issue ar, compute 5 us, wait ar,
// wait ar (the final one is free). With Trace::p2p_per_peer_streams a send/recv runs on the
// stream of its (peer, direction) instead, a batch of its own even in a group (trace_analysis.h:
// stream_of).
#include <map>

#include "replay_build.h"
#include "trace_analysis.h"
#include "twinccl/errors.h"

namespace twinccl::sim::detail {

void add_batches_and_events(const Trace& trace, const ReplayOptions& options,
                            double flops_per_second,
                            const std::vector<std::vector<int>>& member_of_op,
                            ReplayProgram& program) {
  program.rank_events.resize(trace.ranks.size());
  for (std::size_t r = 0; r < trace.ranks.size(); ++r) {
    const RankTrace& rt = trace.ranks[r];
    std::map<StreamKey, int> last_batch;            // stream -> its last batch
    std::map<std::pair<int, int>, int> open_group;  // (comm, group) -> batch
    std::vector<ReplayEvent>& events = program.rank_events[r];
    const double slowdown =
        r < options.rank_compute_slowdown.size() ? options.rank_compute_slowdown[r] : 1.0;
    for (const TraceEvent& e : rt.events) {
      if (e.kind == TraceEventKind::compute) {
        const double seconds =
            slowdown * (e.seconds * options.compute_scale + e.flops / flops_per_second);
        events.push_back({ReplayEventKind::compute, -1, seconds});
        continue;
      }
      const int m = member_of_op[r][static_cast<std::size_t>(e.op)];
      if (e.kind == TraceEventKind::wait) {
        events.push_back({ReplayEventKind::wait, m, 0.0});
        continue;
      }
      const TraceOp& op = rt.ops[static_cast<std::size_t>(e.op)];
      ReplayMember& member = program.members[static_cast<std::size_t>(m)];
      if (member.batch >= 0) {
        throw ConfigError("trace: rank " + std::to_string(r) + " issues op " +
                          std::to_string(e.op) + " (" + op_label(trace, op) +
                          ") twice in its events");
      }
      const auto group_key = std::make_pair(op.comm, op.group);
      const bool grouped = op.group > 0 && !own_batch_in_group(trace, op);
      const auto open = grouped ? open_group.find(group_key) : open_group.end();
      if (open != open_group.end()) {
        member.batch = open->second;
      } else {
        member.batch = static_cast<int>(program.batches.size());
        ReplayBatch batch;
        const StreamKey stream = stream_of(trace, op);
        const auto last = last_batch.find(stream);
        if (last != last_batch.end()) {
          batch.previous = last->second;
          program.batches[static_cast<std::size_t>(last->second)].next = member.batch;
        }
        program.batches.push_back(std::move(batch));
        last_batch[stream] = member.batch;
        if (grouped) open_group[group_key] = member.batch;
      }
      program.batches[static_cast<std::size_t>(member.batch)].members.push_back(m);
      events.push_back({ReplayEventKind::issue, m, 0.0});
    }
    for (std::size_t i = 0; i < rt.ops.size(); ++i) {
      const int m = member_of_op[r][i];
      if (program.members[static_cast<std::size_t>(m)].batch < 0) {
        throw ConfigError("trace: rank " + std::to_string(r) + " op " + std::to_string(i) + " (" +
                          op_label(trace, rt.ops[i]) + ") is never issued in its events");
      }
      events.push_back({ReplayEventKind::wait, m, 0.0});
    }
  }
}

}  // namespace twinccl::sim::detail
