// The clusters clouds rent, as presets (topologies/presets/cloud_clusters.cc): every one loads at
// 1 and 2 nodes, `topo check` finds nothing to warn about, and each carries its cloud's NICs and
// network class; a topology file says the class and the GPU memory and writes them back.
#include <catch2/catch.hpp>
#include <string>

#include "twinccl/errors.h"
#include "twinccl/topologies/describe.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_edit.h"
#include "twinccl/topologies/topology_file.h"

using namespace twinccl;
using namespace twinccl::topo;

TEST_CASE("cloud presets: listed, loadable, and clean under topo check") {
  int clouds = 0;
  for (const PresetInfo& p : list_presets()) {
    if (!cloud_cluster(p.example)) continue;
    ++clouds;
    CAPTURE(p.example);
    for (const std::string n : {"1", "2"}) {
      const std::string name = p.pattern.substr(0, p.pattern.size() - 1) + n;
      const Topology t = load_topology(name);
      CHECK(t.gpu_count() == 8 * std::stoi(n));
      CHECK_THAT(check_report(t), Catch::Contains("warnings: 0"));
    }
  }
  CHECK(clouds == 16);
  CHECK_THROWS_AS(load_topology("aws-p5-0"), ConfigError);
  CHECK_THROWS_AS(load_topology("aws-p5-x"), ConfigError);  // not a preset: the list
}

TEST_CASE("cloud presets: NICs and network class as the clouds sell them") {
  const TopologySummary p5 = load_topology("aws-p5-2").summary();
  CHECK(p5.network == NetworkClass::efa);
  CHECK(p5.nics_per_node == 8);  // 32 x 100G EFA, striped 4 per GPU by aws-ofi-nccl
  CHECK(p5.nic_bandwidth_gbps == 50.0);
  CHECK(p5.nvls_capable);
  const TopologySummary p4d = load_topology("aws-p4d-2").summary();
  CHECK(p4d.network == NetworkClass::efa_sendrecv);  // aws-ofi-nccl's SENDRECV protocol
  CHECK(p4d.nics_per_node == 4);
  CHECK(p4d.nic_bandwidth_gbps == 12.5);
  CHECK(p4d.memory_gbps == 1555.0);
  CHECK(load_topology("aws-p5e-1").summary().memory_gbps == 4800.0);
  CHECK(load_topology("gcp-a3mega-2").summary().network == NetworkClass::tcpxo);
  CHECK(load_topology("gcp-a3mega-2").summary().nic_bandwidth_gbps == 25.0);
  CHECK_FALSE(load_topology("gcp-a3mega-2").summary().nvls_capable);  // GCP's NCCL_NVLS_ENABLE=0
  const TopologySummary p5en = load_topology("aws-p5en-2").summary();
  CHECK(p5en.network == NetworkClass::efa_v3);
  CHECK(p5en.nics_per_node == 8);  // 16 x 200G EFAv3, 2 per GPU
  CHECK(p5en.memory_gbps == 4800.0);
  CHECK(load_topology("aws-p6-b200-2").summary().network == NetworkClass::efa_v3);
  // p6-b300: 16 x 400G EFA, 2 a GPU (one NCCL device of 100 GB/s), on PCIe gen6; aws-ofi-nccl's
  // own "p6-b300" platform with p5en/p6-b200's values (35 us, RDMA, 512 KiB NVLS chunks).
  const TopologySummary p6b300 = load_topology("aws-p6-b300-2").summary();
  CHECK(p6b300.gpus == 16);
  CHECK(p6b300.nics_per_node == 8);
  CHECK(p6b300.nic_bandwidth_gbps == 100.0);
  CHECK(p6b300.pcie_gen == 6);
  CHECK(p6b300.network == NetworkClass::efa_v3);
  CHECK(p6b300.nvls_capable);
  const TopologySummary a3high = load_topology("gcp-a3high-2").summary();
  CHECK(a3high.network == NetworkClass::tcpx);
  CHECK(a3high.nics_per_node == 4);
  CHECK(a3high.nic_bandwidth_gbps == 25.0);
  CHECK_FALSE(a3high.nvls_capable);
  CHECK(load_topology("gcp-a4-2").summary().network ==
        NetworkClass::roce_gib);  // GCP's gIB environment
  CHECK(load_topology("gcp-a4-2").summary().nvls_capable);
  CHECK(load_topology("oci-a100-2").summary().nics_per_node == 16);
  CHECK(load_topology("mi300x-roce-2").summary().network == NetworkClass::roce);
  CHECK(load_topology("mi325x-roce-2").summary().memory_gbps == 6000.0);
  CHECK(load_topology("azure-ndv5-2").summary().network == NetworkClass::infiniband);
  CHECK(load_topology("h100-cluster-2").summary().network == NetworkClass::infiniband);
}

TEST_CASE("topology file: network and memory_gbps are read, checked and written back") {
  const Topology p5 = load_topology("aws-p5-2");
  const std::string json = to_json(p5);
  CHECK_THAT(json, Catch::Contains("\"network\": \"efa\""));
  const Topology back = topology_from_json(json);
  CHECK(back.facts().network == NetworkClass::efa);
  for (const char* name : {"aws-p4d-2", "aws-p6-b200-2", "gcp-a3high-2"}) {
    const Topology t = load_topology(name);
    CHECK(topology_from_json(to_json(t)).facts().network == t.facts().network);
  }
  CHECK_THAT(to_json(load_topology("aws-p4d-1")), Catch::Contains("\"network\": \"efa-sendrecv\""));
  CHECK_THROWS_WITH(
      topology_from_json(R"({"version": 1, "network": "myrinet", "vertices": [], "links": []})"),
      Catch::Contains("network") && Catch::Contains("efa"));
}

TEST_CASE("topology file and --set: the latency facts are read, checked, kept and written back") {
  TopologyEdits e;
  e.settings.push_back(parse_setting("host_launch_us=7.5"));
  e.settings.push_back(parse_setting("group_launch_us=4"));
  e.settings.push_back(parse_setting("network_hop_extra_us=-2"));
  e.settings.push_back(parse_setting("nodes=1"));
  const Topology t = apply_edits(load_topology("aws-p5e-2"), e).topology;
  // Every fact survives the edits (an edited p5e was InfiniBand with the arch's HBM before).
  CHECK(t.facts().network == NetworkClass::efa);
  CHECK(t.facts().memory_gbps == 4800.0);
  CHECK(t.summary().nodes == 1);
  const Topology back = topology_from_json(to_json(t));
  CHECK(back.facts().host_launch_us == 7.5);
  CHECK(back.facts().group_launch_us == 4.0);
  CHECK(back.facts().network_hop_extra_us == -2.0);
  CHECK_THAT(describe(back), Catch::Contains("host launch 7.5 us per call"));
  CHECK_THROWS_AS(parse_setting("host_launch_us=-1"), InvalidArgument);
  CHECK_THROWS_WITH(
      topology_from_json(R"({"version": 1, "host_launch_us": -3, "vertices": [], "links": []})"),
      Catch::Contains("host_launch_us"));
}

TEST_CASE("gb200-nvl72-cluster-RxG: a job's share of each rack, as a scheduler places it") {
  const Topology t = load_topology("gb200-nvl72-cluster-2x64");  // 128 GPUs as 2 x 64
  const TopologySummary s = t.summary();
  CHECK(s.gpus == 128);
  CHECK(s.nodes == 2);
  CHECK(s.gpus_per_node == 64);
  CHECK(s.nics_per_node == 64);
  CHECK(s.nvls_capable);
  CHECK_THAT(check_report(t), Catch::Contains("warnings: 0"));
  CHECK(t.vertex(t.gpu(64)).node == 1);  // rank 64 is the second rack's first GPU
  CHECK(load_topology("gb200-nvl72-cluster-2x72").gpu_count() ==
        load_topology("gb200-nvl72-cluster-2").gpu_count());
  CHECK_THROWS_WITH(load_topology("gb200-nvl72-cluster-2x66"), Catch::Contains("whole trays"));
  CHECK_THROWS_AS(load_topology("gb200-nvl72-cluster-0x64"), ConfigError);
}

TEST_CASE("topology file and --set: nic_delivered_share is read, checked and written back") {
  // What `twinccl calibrate --scale-trend` writes: 0 (absent) = the network class's share.
  TopologyEdits e;
  e.settings.push_back(parse_setting("nic_delivered_share=0.9"));
  const Topology t = apply_edits(load_topology("b200-cluster-2"), e).topology;
  const Topology back = topology_from_json(to_json(t));
  CHECK(back.facts().nic_delivered_share == 0.9);
  CHECK(back.summary().nic_delivered_share == 0.9);
  CHECK_THAT(describe(back), Catch::Contains("NIC share 0.9"));
  CHECK(load_topology("b200-cluster-2").facts().nic_delivered_share == 0.0);
  CHECK_THAT(to_json(load_topology("b200-cluster-2")), !Catch::Contains("nic_delivered_share"));
  // Above 1 (more than line rate) and below 0.05 are refused, naming the range.
  CHECK_THROWS_WITH(parse_setting("nic_delivered_share=1.2"),
                    Catch::Contains("nic_delivered_share") && Catch::Contains("0..1"));
  TopologyEdits tiny;
  tiny.settings.push_back(parse_setting("nic_delivered_share=0.01"));
  CHECK_THROWS_WITH(apply_edits(load_topology("b200-cluster-2"), tiny),
                    Catch::Contains("nic_delivered_share must be 0") && Catch::Contains("0.05"));
  CHECK_THROWS_WITH(
      topology_from_json(
          R"({"version": 1, "nic_delivered_share": 1.5, "vertices": [], "links": []})"),
      Catch::Contains("nic_delivered_share"));
}

TEST_CASE("topology file and --set: nic_ports is read, checked, kept and written back") {
  // OCI's A100 shapes: 16 x 100G RDMA devices on 8 dual-port cards (cloud_clusters.cc).
  const Topology oci = load_topology("oci-a100-2");
  CHECK(oci.facts().nic_ports == 2);
  CHECK_THAT(describe(oci), Catch::Contains("on 8 cards of 2 ports each"));
  CHECK(topology_from_json(to_json(oci)).facts().nic_ports == 2);
  CHECK(load_topology("aws-p5-2").facts().nic_ports == 0);
  CHECK_THAT(to_json(load_topology("aws-p5-2")), !Catch::Contains("nic_ports"));
  TopologyEdits e;
  e.settings.push_back(parse_setting("nic_ports=1"));
  CHECK(apply_edits(oci, e).topology.facts().nic_ports == 1);
  CHECK_THROWS_WITH(parse_setting("nic_ports=9"), Catch::Contains("nic_ports"));
  CHECK_THROWS_WITH(
      topology_from_json(R"({"version": 1, "nic_ports": 12, "vertices": [], "links": []})"),
      Catch::Contains("nic_ports"));
}
