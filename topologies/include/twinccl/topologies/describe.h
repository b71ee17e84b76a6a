// Text about a topology for people and for the CLI (`twinccl topo show|check`).
//
//   topo::Topology t = topo::load_topology("dgx-h100");
//   std::cout << topo::describe(t) << topo::draw_node(t, 0);
//   std::cout << topo::check_report(t);  // load errors are ConfigError from load_topology()
#pragma once

#include <string>

#include "twinccl/topologies/topology.h"

namespace twinccl::topo {

// Counts, bandwidths, NVLS, network shape and the routing rule; lines fit in 100 columns.
std::string describe(const Topology& topology);

// An ASCII drawing of one node: NVSwitch fabric, GPUs with ranks, PCIe switches, NICs and the
// network switch each NIC plugs into, CPUs; 8 GPUs per row, at most 100 columns wide.
// Throws InvalidArgument when node is out of range.
std::string draw_node(const Topology& topology, int node);

// For `topo check FILE` after a successful load: the summary, route statistics over the ring
// neighbours and rank 0 of every GPU, and warnings (GPUs without a NIC in a multi-node
// topology, oversubscribed leaves, nodes of different sizes, NVLS claimed on a pre-Hopper GPU,
// NICs faster than their PCIe link).
std::string check_report(const Topology& topology);
// The NICs whose port is more than 1.25 x the PCIe link feeding them, said as check_report and a
// `--set nic_gbps` / `pcie_gbps` what-if say it ("16 NICs run at most at their PCIe link: ..."); ""
// when there are none.
std::string starved_nics_warning(const Topology& topology);

}  // namespace twinccl::topo
