// GB300 NVL72 presets (topologies/presets/gb200_nvl72.cc): GB200's NVLink 5 rack with one
// ConnectX-8 800G NIC per GPU on a PCIe gen6 x16 path (NCCL's 96 GB/s), whole or partial racks.
#include <catch2/catch.hpp>

#include "twinccl/errors.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl::topo;
using Catch::Matchers::Contains;

TEST_CASE("gb300-nvl72: 72 GPUs, NVLink 5 as GB200, 800G NICs on PCIe gen6", "[topologies]") {
  const TopologySummary s = load_topology("gb300-nvl72").summary();
  CHECK(s.arch == GpuArch::blackwell);
  CHECK(s.gpus == 72);
  CHECK(s.nvls_capable);
  CHECK(s.nvlink_bandwidth_gbps == Approx(18 * 40.1));
  CHECK(s.pcie_gen == 6);
  CHECK(s.pcie_bandwidth_gbps == Approx(96.0));  // NCCL: 480 x 100 Mb/s per lane x 16
  CHECK(s.nics_per_node == 72);
  CHECK(s.nic_bandwidth_gbps == Approx(100.0));
}

TEST_CASE("gb300-nvl72-cluster-RxG: a job's trays of R racks, as OCI runs 2 x 16 trays",
          "[topologies]") {
  const TopologySummary s = load_topology("gb300-nvl72-cluster-2x64").summary();
  CHECK(s.nodes == 2);
  CHECK(s.gpus_per_node == 64);
  CHECK(s.nics_per_node == 64);
  CHECK(s.nic_bandwidth_gbps == Approx(100.0));
  CHECK(load_topology("gb300-nvl72-cluster-3").gpu_count() == 216);
  CHECK_THROWS_WITH(load_topology("gb300-nvl72-cluster-2x6"),
                    Contains("gb300-nvl72-cluster-RxG") && Contains("whole trays of 4"));
  // gb200's stay gb200's (48 GB/s gen5 path, 400G NICs).
  CHECK(load_topology("gb200-nvl72-cluster-2x64").summary().pcie_bandwidth_gbps == Approx(48.0));
}
