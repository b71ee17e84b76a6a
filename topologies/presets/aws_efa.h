// Internal to the presets: what every AWS EFA preset (aws-p4d-N, aws-p4de-N, aws-p5-N, aws-p5e-N,
// aws-p5en-N, aws-p6-b200-N, aws-p6-b300-N) carries from AWS's NCCL network plugin,
// aws-ofi-nccl, which every NCCL run on EFA loads:
//
//   DgxSystem s = aws_ofi_nccl_env(cloud_node(...));   // NCCL_BUFFSIZE 8 MiB, P2P chunk 512 KiB
//
// What the plugin exports, and since when: topologies/include/twinccl/topologies/network_nccl_env.h
// (topo::network_nccl_env, the one owner of the plugin's exports, the buffers and the NVLS chunks,
// with their sources: aws/aws-ofi-nccl v1.21.1 src/platform-aws.cpp:92-93, 106-107, 142-145,
// 167-170, 187-190; the buffers from v1.16.0, commit f3f5c40b, "values that we recommend to users
// to set anyway"). AWS's own nccl-tests recipes set the same two buffers by hand before the plugin
// did (aws-samples/awsome-distributed-training@74193cae micro-benchmarks/nccl-tests/slurm/
// nccl-tests.sbatch:39-42, 2024-04-16; aws/aws-k8s-tester@e8c3ef8 test/cases/nvidia/
// mpi_test.go:114-118 for p4d/p4de/p5/p5e/p5en).
//
// Why the presets write them as facts. A user who rents an EFA instance today gets the current
// plugin with the EFA installer or AWS's Deep Learning AMIs and containers, so NCCL runs at 8 MiB
// / 512 KiB unless the user sets otherwise; the network class's export already gives a topology
// of an EFA class those values, and the presets write them out too, so `topo show` and `--format
// json` show what runs. A run that had NCCL's defaults (a plugin older than v1.16.0 and no
// NCCL_BUFFSIZE set by hand) says so with `--set nccl_buffsize_bytes=4194304
// p2p_net_chunk_bytes=131072`; tests/fidelity/figures/aws-efa.csv does that per row, with its
// evidence in docs/fidelity-sources.md ("aws-ofi-nccl's exported settings, per row"). What the two
// values move: NCCL_BUFFSIZE sets a Simple step (NCCL_BUFFSIZE / NCCL_STEPS 8) and so a ring or
// tree's network window; NCCL_P2P_NET_CHUNKSIZE the network messages of send/recv and alltoall
// (sim/src/model.h, sim/src/p2p_net_messages.cc).
#pragma once

#include "dgx_node.h"
#include "twinccl/topologies/network_nccl_env.h"

namespace twinccl::topo::presets {

// `node` with the NCCL buffers aws-ofi-nccl (v1.16.0 and later) exports on its network class.
inline DgxSystem aws_ofi_nccl_env(DgxSystem node) {
  const NetworkNcclEnv env = network_nccl_env(node.network);
  node.nccl_buffsize_bytes = env.nccl_buffsize_bytes;
  node.p2p_net_chunk_bytes = env.p2p_net_chunk_bytes;
  return node;
}

}  // namespace twinccl::topo::presets
