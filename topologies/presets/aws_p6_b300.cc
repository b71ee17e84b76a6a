// aws-p6-b300-N's node: AWS p6-b300.48xlarge, 8 B300 (Blackwell Ultra) on NVLink 5 NVSwitch with
// 16 x 400G EFA, listed and built by cloud_clusters.cc as its other clouds.
//
//   gpu0 gpu1    gpu2 gpu3    gpu4 gpu5    gpu6 gpu7     NVLink 5 NVSwitch (NVLS), as dgx-b200
//     \   /        \   /        \   /        \   /       PCIe gen6 x16 = 96 GB/s (NCCL's table)
//     pcie0        pcie1        pcie2        pcie3
//     /   \        /   \        /   \        /   \       2 GPUs + 2 NICs per PCIe switch
//   nic0 nic1    nic2 nic3    nic4 nic5    nic6 nic7     one NCCL device per GPU: its 2 x 400G
//                                                        EFA striped by aws-ofi-nccl = 100 GB/s
//
// Figures and their sources:
//   8 B300 and 6400 Gbps of EFA networking a node: AWS's instance page,
//     https://aws.amazon.com/ec2/instance-types/p6/ , and its accelerated-computing specifications,
//     https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html (not reachable from here: the
//     figures as public instance listings copy them, "gpuCount": 8, "network": "6400 Gigabit").
//   16 EFA devices at 400 Gb/s a node (17 network interfaces: 1 ENA + 16 EFA-only), 100 GB/s a
//     GPU (16 x 400 Gb/s / 8), `found 16 nics`, fabric efa-direct: a real 2-node run's report,
//     terrificdm/p6b300-efa-deepep-nccl-testkit@06942b1 examples/report-sample.md sections 1, 2,
//     4. As p5en (16 x 200G as 8 rails of 2), the preset gives each GPU one 800G NIC.
//   Network class efa-v3: aws-ofi-nccl v1.21.1 (2475c4c) src/platform-aws.cpp:175-194, platform
//     "p6-b300": latency 35.0 us, gdr_required, RDMA protocol, EFA hardware completion counters
//     and env (:186-192), the "p5en/p6-b200" platform's (:149-174) less NCCL_NETDEVS_POLICY=max:1.
//     The plugin exports that env at init (:686-688) where the user set none (overwrite false,
//     include/nccl_ofi_environ.h:47-58, :104-111). efa-v3 carries its NCCL_NVLS_CHUNKSIZE =
//     NCCL_NVLSTREE_MAX_CHUNKSIZE 512 KiB (sim/src/network_class.h efa_terms); its NCCL_BUFFSIZE
//     8 MiB and NCCL_P2P_NET_CHUNKSIZE 512 KiB (:187-188) the preset carries as every AWS preset
//     does (aws_efa.h: exported on every EFA platform since v1.16.0; on p6-b300 by "p-series"
//     before v1.21.0 gave it its own entry).
//   aws-ofi-nccl's tuner has a platform (include/tuner/nccl_ofi_tuner_common.h
//     NCCL_OFI_TUNER_P6_B300) with region tables only (src/tuner/nccl_ofi_regions.cpp:1335), no
//     model row: efa-v3 takes P5en's 18 us.
//   PCIe gen6: not stated on the AWS pages above; B300 and its HGX board are PCIe gen6 parts (the
//     gb300 preset's ConnectX-8 path, gb200_nvl72.cc), and a GPU's 100 GB/s of EFA needs more than
//     gen5 x16's 48. An assumption, named here.
// Not set: the host CPU (not found in a public source reached: the host's group launch stays the
//   5 us default) and the B300's HBM rate (the arch's default, as gb300-nvl72); AWS's region
//   tuner tables for p6-b300 (not modelled, as p5en's and p6-b200's).
#include "aws_efa.h"
#include "dgx_node.h"
#include "twinccl/topologies/presets.h"

namespace twinccl::topo {

presets::DgxSystem presets::aws_p6_b300_system() {
  // The host is not named publicly: cloud_node's 5 us default launch.
  DgxSystem s = cloud_node(b200_system(), "aws-p6-b300", "AWS p6-b300.48xlarge",
                           "8 B300, NVLink 5 (NVLS), 16 x 400G EFA as 8 rails of 2 (aws-ofi-nccl), "
                           "PCIe gen6",
                           "2 x 400G EFA", NetworkClass::efa_v3);
  s.node.pcie_gen = 6;
  s.node.nic_bandwidth_gbps = 100.0;  // 2 x 400 Gb/s a GPU
  return aws_ofi_nccl_env(s);
}

}  // namespace twinccl::topo
