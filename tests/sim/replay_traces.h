// Hand-made traces for the replay tests: a tiny builder over sim::Trace.
#pragma once

#include <string>
#include <vector>

#include "twinccl/sim/replay_trace.h"
#include "twinccl/topologies/builder.h"

namespace twinccl::sim::testing {

class TraceBuilder {
 public:
  explicit TraceBuilder(int world_size) {
    trace_.ranks.resize(static_cast<std::size_t>(world_size));
  }
  int comm(std::string name, std::vector<int> ranks) {
    trace_.communicators.push_back({std::move(name), std::move(ranks)});
    return static_cast<int>(trace_.communicators.size()) - 1;
  }
  // Issues op on world rank `rank`; returns its id there. seq counts per (rank, comm).
  int issue(int rank, int comm, OpKind kind, std::size_t count, int peer = -1) {
    RankTrace& rt = trace_.ranks[static_cast<std::size_t>(rank)];
    TraceOp op;
    op.comm = comm;
    op.kind = kind;
    op.count = count;
    op.peer = peer;
    op.seq = 0;
    for (const TraceOp& o : rt.ops) {
      if (o.comm == comm && o.kind == kind && o.peer == peer) ++op.seq;
    }
    if (!is_p2p(kind)) {
      op.seq = 0;
      for (const TraceOp& o : rt.ops) {
        if (o.comm == comm && !is_p2p(o.kind)) ++op.seq;
      }
    }
    rt.ops.push_back(op);
    const int id = static_cast<int>(rt.ops.size()) - 1;
    rt.events.push_back({TraceEventKind::op, id, 0.0, 0.0});
    return id;
  }
  void wait(int rank, int op) {
    trace_.ranks[static_cast<std::size_t>(rank)].events.push_back(
        {TraceEventKind::wait, op, 0.0, 0.0});
  }
  void blocking(int rank, int comm, OpKind kind, std::size_t count) {
    wait(rank, issue(rank, comm, kind, count));
  }
  void compute(int rank, double seconds, double flops = 0.0) {
    trace_.ranks[static_cast<std::size_t>(rank)].events.push_back(
        {TraceEventKind::compute, -1, seconds, flops});
  }
  // The same on every rank of the communicator.
  void blocking_all(int comm, OpKind kind, std::size_t count) {
    for (int r : trace_.communicators[static_cast<std::size_t>(comm)].ranks)
      blocking(r, comm, kind, count);
  }
  const Trace& trace() const { return trace_; }

 private:
  Trace trace_;
};

// Two switches joined by one link of `middle_gbps`; GPUs 0..half-1 on the first, the rest on the
// second, each with a 100 GB/s link to its switch.
inline topo::Topology two_islands(int n, double middle_gbps) {
  topo::TopologyBuilder b("two-islands-" + std::to_string(n));
  const topo::VertexId s0 = b.add_switch(topo::VertexKind::nvswitch, "s0", 0);
  const topo::VertexId s1 = b.add_switch(topo::VertexKind::nvswitch, "s1", 0);
  for (int r = 0; r < n; ++r) {
    const topo::VertexId g = b.add_gpu("gpu" + std::to_string(r), 0);
    b.connect(g, r < n / 2 ? s0 : s1,
              {.type = topo::LinkType::nvlink, .bandwidth_gbps = 100.0, .latency_us = 0.5});
  }
  b.connect(s0, s1,
            {.type = topo::LinkType::nvlink, .bandwidth_gbps = middle_gbps, .latency_us = 0.5});
  return b.seal();
}

}  // namespace twinccl::sim::testing
