// Small hand-made topologies for the simulator tests, with formulas easy to write down.
#pragma once

#include <string>

#include "twinccl/sim/timing.h"
#include "twinccl/topologies/builder.h"

namespace twinccl::sim::testing {

// n GPUs, each with one full-duplex link of `gbps` / `latency_us` to one switch.
// `slow_rank` (if >= 0) gets `slow_gbps` instead.
inline topo::Topology star(int n, double gbps, double latency_us, int slow_rank = -1,
                           double slow_gbps = 0.0, topo::GpuArch arch = topo::GpuArch::unknown) {
  topo::TopologyBuilder b("star-" + std::to_string(n));
  b.arch(arch);
  const topo::VertexId sw = b.add_switch(topo::VertexKind::nvswitch, "sw", 0);
  for (int r = 0; r < n; ++r) {
    const topo::VertexId g = b.add_gpu("gpu" + std::to_string(r), 0);
    b.connect(g, sw,
              {.type = topo::LinkType::nvlink,
               .bandwidth_gbps = r == slow_rank ? slow_gbps : gbps,
               .latency_us = latency_us});
  }
  return b.seal();
}

// n GPUs in a cycle, gpu r linked to gpu r+1 (one link for n = 2, none for n = 1).
inline topo::Topology cycle(int n, double gbps, double latency_us) {
  topo::TopologyBuilder b("cycle-" + std::to_string(n));
  for (int r = 0; r < n; ++r) {
    b.add_vertex({.kind = topo::VertexKind::gpu,
                  .name = "gpu" + std::to_string(r),
                  .node = 0,
                  .rank = r,
                  .forwards = true});
  }
  const topo::LinkSpec link{
      .type = topo::LinkType::nvlink, .bandwidth_gbps = gbps, .latency_us = latency_us};
  for (int r = 0; r + 1 < n; ++r) b.connect(r, r + 1, link);
  if (n > 2) b.connect(n - 1, 0, link);
  return b.seal();
}

inline Request ring_request(OpKind kind, std::size_t count, int nranks = 0) {
  Request r;
  r.spec.kind = kind;
  r.spec.count = count;
  r.spec.nranks = nranks;
  r.algorithm = "ring";
  r.protocol = Protocol::simple;
  r.fidelity = Fidelity::flow;
  r.software_latency = false;
  r.compression = RoundCompression::off;
  return r;
}

}  // namespace twinccl::sim::testing
