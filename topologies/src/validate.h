// Internal: the checks seal() runs, in order, each throwing ConfigError that names the vertex or
// link, the field and the bad value; and the indexes routing needs.
#pragma once

#include "topology_data.h"

namespace twinccl::topo {

void validate_vertices(const TopologyData& data);   // names, nodes, GPU ranks, per-kind fields
void validate_links(const TopologyData& data);      // endpoints, bandwidth, latency, lanes
void index_topology(TopologyData& data);            // adjacency, by_name, ranks, node members
void validate_facts(const TopologyData& data);      // NVLS needs an NVSwitch, PCIe gen range
void validate_connected(const TopologyData& data);  // every GPU reaches every GPU

}  // namespace twinccl::topo
