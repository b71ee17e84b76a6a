// torus-RxC[-GBPS]: a rows x cols 2D torus of accelerators, each linked to its 4 neighbours with
// wrap-around (TPU-style inter-chip links). Accelerators forward traffic (they are the routers).
//
//   gpu0_0 -- gpu0_1 -- gpu0_2 -- gpu0_3 --+      rank of gpu{r}_{c} = r * cols + c
//     |         |         |         |      |      every link: link_bandwidth_gbps per direction
//   gpu1_0 -- gpu1_1 -- gpu1_2 -- gpu1_3 --+      (default 50 GB/s, a round ICI-class figure)
//     |         |         |         |             and link_latency_us (default 0.5 us)
//    ...       ...       ...       ...
//     +--- wrap-around to row 0 ---+
//
// A dimension of 2 gets one link (its wrap-around would duplicate it); a dimension of 1 none.
// Routes: fewest hops (wrap-around taken when shorter), ties by destination (routing_rule()).
// All accelerators are in node 0; arch is unknown (the torus is not an NVIDIA part).
#include <string>

#include "twinccl/errors.h"
#include "twinccl/topologies/builder.h"
#include "twinccl/topologies/presets.h"

namespace twinccl::topo {

Topology torus_2d(int rows, int cols, double link_bandwidth_gbps, double link_latency_us) {
  constexpr int kMaxSide = 128;
  if (rows < 1 || rows > kMaxSide || cols < 1 || cols > kMaxSide) {
    throw ConfigError("preset torus-RxC: rows and cols must be in 1.." + std::to_string(kMaxSide) +
                      ", got " + std::to_string(rows) + "x" + std::to_string(cols));
  }
  TopologyBuilder b("torus-" + std::to_string(rows) + "x" + std::to_string(cols));
  b.description(std::to_string(rows) + " x " + std::to_string(cols) +
                " 2D torus of accelerators, wrap-around links");
  const LinkSpec link{.type = LinkType::nvlink,
                      .bandwidth_gbps = link_bandwidth_gbps,
                      .latency_us = link_latency_us};
  const auto id = [&](int r, int c) { return r * cols + c; };  // vertex id = rank
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      b.add_vertex({.kind = VertexKind::gpu,
                    .name = "gpu" + std::to_string(r) + "_" + std::to_string(c),
                    .node = 0,
                    .rank = id(r, c),
                    .forwards = true});
    }
  }
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      if (cols > 2 || (cols == 2 && c == 0)) b.connect(id(r, c), id(r, (c + 1) % cols), link);
      if (rows > 2 || (rows == 2 && r == 0)) b.connect(id(r, c), id((r + 1) % rows, c), link);
    }
  }
  return b.seal();
}

}  // namespace twinccl::topo
