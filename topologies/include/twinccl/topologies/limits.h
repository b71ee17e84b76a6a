// Caps on what a topology may hold, so that no file (JSON, NCCL XML) or builder call can crash,
// hang or exhaust memory. Each refusal is a ConfigError that states the cap it hit.
//
//   if (gbps < topo::limits::min_bandwidth_gbps) ...   // 1e-3 GB/s: slower is not a link
//
// Why these numbers (docs/topologies.md, "Limits"): the analytic model serves up to ~1M ranks and
// the flow model ~16k-64k GPUs; a realistic 1M-GPU cluster (8 GPUs, 8 NICs, a few switches per
// node) needs ~2.5M vertices and ~3M links. Physical values span what a link can be: 1 MB/s to
// 1 PB/s per direction, at most 1 s of latency; finite, never denormal.
#pragma once

#include <cstddef>
#include <cstdint>

namespace twinccl::topo::limits {

// Graph size (TopologyBuilder::seal(), the JSON reader and the XML importer).
inline constexpr int max_gpus = 1 << 20;      // 1,048,576 ranks
inline constexpr int max_vertices = 1 << 22;  // 4,194,304 (GPUs, switches, CPUs, NICs)
inline constexpr int max_links = 1 << 23;     // 8,388,608
inline constexpr int max_nodes = max_gpus;    // every node holds at least one GPU
// Without one forwarding fabric (switch, CPU, PCIe) joining every GPU, connectivity is checked
// pair by pair over direct GPU-GPU links; that check is kept to this many GPUs.
inline constexpr int max_gpus_without_common_fabric = 1024;

// Per-vertex and per-link fields.
inline constexpr double min_bandwidth_gbps = 1e-3;  // 1 MB/s
inline constexpr double max_bandwidth_gbps = 1e6;   // 1 PB/s
inline constexpr double max_latency_us = 1e6;       // 1 s
inline constexpr int max_lanes = 4096;
// The latency facts (topology.h TopologyFacts): a host launch up to 10 ms per GPU, a network hop's
// extra latency within +-10 ms.
inline constexpr double max_host_launch_us = 1e4;
inline constexpr double max_network_hop_extra_us = 1e4;
// The share of the NICs' rate a call across nodes moves (TopologyFacts::nic_delivered_share): 0
// (the network class's) or 0.05 .. 1 (a network moves no more than its line rate).
inline constexpr double min_nic_delivered_share = 0.05;
inline constexpr double max_nic_delivered_share = 1.0;
// The share's trend per doubling of nodes (TopologyFacts::nic_share_per_doubling): within +-50%.
inline constexpr double max_nic_share_per_doubling = 0.5;
// RDMA devices one NIC card presents (TopologyFacts::nic_ports): a dual- or quad-port card, at
// most 8.
inline constexpr int max_nic_ports = 8;
// NCCL's buffer and p2p chunk settings (TopologyFacts): 0 (not set here: the network's export,
// else NCCL's default; network_nccl_env.h) or 4 KiB .. 1 GiB,
// NCCL's p2p part alignment (device.h ncclP2pPartBounds) up to a buffer no GPU would hold per peer.
inline constexpr double min_nccl_buffer_bytes = 4096;
inline constexpr double max_nccl_buffer_bytes = 1073741824;
inline constexpr int max_physical_switches = 4096;
inline constexpr int max_level = 64;
inline constexpr int max_radix = 1 << 20;
inline constexpr std::size_t max_name_bytes = 256;          // vertex and topology names
inline constexpr std::size_t max_description_bytes = 4096;  // free text

// Files.
inline constexpr std::uintmax_t max_file_bytes = 64u << 20;  // 64 MiB; bigger graphs use templates
inline constexpr int max_nesting_depth = 64;                 // JSON arrays/objects, XML elements
inline constexpr int max_object_members = 256;               // fields of one JSON object
inline constexpr int max_loop_variables = 8;                 // variables of one "for_each"
inline constexpr long long max_loop_value = 1LL << 40;       // |first|, |last| of a for_each range
inline constexpr int max_xml_cpus = 256;                     // <cpu> elements (NUMA nodes)

// Error messages show at most this many bytes of a bad value.
inline constexpr std::size_t max_echo_bytes = 100;

}  // namespace twinccl::topo::limits
