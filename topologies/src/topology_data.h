// Internal: what a sealed Topology holds. Built once by TopologyBuilder::seal(), then read-only
// except for the router's lazily filled distance maps (guarded by their own mutex).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "router.h"
#include "twinccl/topologies/topology.h"

namespace twinccl::topo {

struct TopologyData {
  std::string name;
  std::string description;
  TopologyFacts facts;
  std::vector<Vertex> vertices;
  std::vector<Link> links;

  // Derived at seal time.
  std::vector<std::vector<LinkId>> links_of;  // per vertex, ascending link ids
  std::map<std::string, VertexId, std::less<>> by_name;
  std::vector<VertexId> gpu_by_rank;
  int node_count = 0;
  std::vector<std::vector<VertexId>> node_members;  // per node, ascending vertex ids
  std::vector<VertexId> shared_members;             // node == -1 (network switches)
  std::vector<int> slot;                            // index of a vertex in its node/shared list

  std::unique_ptr<Router> router;  // refers back to this object; created last
};

}  // namespace twinccl::topo
