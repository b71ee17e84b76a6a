// Internal to the presets: what every AWS EFA preset (aws-p4d-N, aws-p4de-N, aws-p5-N, aws-p5e-N,
// aws-p5en-N, aws-p6-b200-N, aws-p6-b300-N) carries from AWS's NCCL network plugin,
// aws-ofi-nccl, which every NCCL run on EFA loads:
//
//   DgxSystem s = aws_ofi_nccl_env(cloud_node(...));   // NCCL_BUFFSIZE 8 MiB, P2P chunk 512 KiB
//
// What the plugin exports. At init, aws-ofi-nccl puts its platform's `env` map into the
// environment where the user set none (aws/aws-ofi-nccl v1.21.1 src/platform-aws.cpp:686-688;
// overwrite false: include/nccl_ofi_environ.h:47-58), before NCCL reads NCCL_BUFFSIZE and
// NCCL_P2P_NET_CHUNKSIZE (NVIDIA/nccl v2.22.3-1 src/init.cc: the net plugin's init at :329-330,
// computeBuffSizes reading both, :563-582, at :1066). Every EFA GPU platform of the plugin's table
// exports the same two values, NCCL_BUFFSIZE=8388608 and NCCL_P2P_NET_CHUNKSIZE=524288, NCCL's 4
// MiB and 128 KiB doubled and quadrupled:
//   v1.21.1 src/platform-aws.cpp  p4d.24xlarge :92-93, p4de.24xlarge :106-107, "p5/p5e" :142-143,
//     "p5en/p6-b200" :167-168, "p6-b300" :187-188 (and "p-series", later p instances, :214-215).
//   Since v1.16.0 (commit f3f5c40b, 2025-05-21, "On P4 and later, set NCCL_BUFFSIZE and
//     NCCL_P2P_NET_CHUNKSIZE to values that we recommend to users to set anyway"): v1.16.0
//     src/platform-aws.cpp:85-86 (p4d), :99-100 (p4de), :129-130 ("p-series": p5en and p6-*),
//     :146-147 (p5/p5e). v1.17.0 split "p5en/p6-b200" out (:165-166), v1.21.0 "p6-b300"
//     (:187-188; before it p6-b300 matched "p-series", the same two values). No tag before
//     v1.16.0 sets either (v1.15.0 and older: neither name in src/ or include/).
//   AWS's own nccl-tests recipes set the same two values by hand before the plugin did
//     (aws-samples/awsome-distributed-training@74193cae micro-benchmarks/nccl-tests/slurm/
//     nccl-tests.sbatch:39-42, 2024-04-16; aws/aws-k8s-tester@e8c3ef8 test/cases/nvidia/
//     mpi_test.go:114-118 for p4d/p4de/p5/p5e/p5en).
//
// Why the presets carry them (one owner: here). A user who rents an EFA instance today gets the
// current plugin with the EFA installer or AWS's Deep Learning AMIs and containers, so NCCL runs
// at 8 MiB / 512 KiB unless the user sets otherwise; a prediction for "my p5 cluster" should be
// that run. The other way round -- presets at NCCL's 4 MiB / 128 KiB and every current run
// passing `--set` -- makes the user know a plugin internal to be right. A run that had NCCL's
// defaults (a plugin older than v1.16.0 and no NCCL_BUFFSIZE set by hand) says so with
// `--set nccl_buffsize_bytes=4194304 p2p_net_chunk_bytes=131072`; tests/fidelity/figures/
// aws-efa.csv does that per row, with its evidence in docs/fidelity-sources.md ("aws-ofi-nccl's
// exported settings, per row"). What the two values move: NCCL_BUFFSIZE sets a Simple step
// (NCCL_BUFFSIZE / NCCL_STEPS 8) and so a ring or tree's network window; NCCL_P2P_NET_CHUNKSIZE
// the network messages of send/recv and alltoall (sim/src/model.h, sim/src/p2p_net_messages.cc).
// Not carried: the plugin's NVLS chunk sizes (the network classes hold them,
// sim/src/network_class.h), NCCL_NET_FORCE_FLUSH=0 and NCCL_NETDEVS_POLICY (no model input).
// Two owners of the plugin's exports, knowingly (the same note is in network_class.h efa_terms):
// the two here are topology facts (`--set nccl_buffsize_bytes=...`, per-row settings, `topo show
// --format json` writes them), because a run with an older plugin or the user's own NCCL_BUFFSIZE
// must be able to undo them; the NVLS chunks have no such setting and live with the class. The
// cost: a hand-written topology JSON of class `efa` without these two facts gets the plugin's
// NVLS chunk but NCCL's 4 MiB / 128 KiB buffers. One owner would have the class name all of the
// plugin's exports and the view take the topology's own value where set (sim/src/
// topology_view.cc), with a way to say "NCCL's default" (today 0 means unset) and `topo show`
// printing where each came from; not done (fixmodel round, docs/fidelity.md), no prediction
// depends on it for any preset or CSV row.
#pragma once

#include "dgx_node.h"

namespace twinccl::topo::presets {

inline constexpr double kAwsOfiNcclBuffsizeBytes = 8388608.0;    // NCCL_BUFFSIZE, 8 MiB
inline constexpr double kAwsOfiNcclP2pNetChunkBytes = 524288.0;  // NCCL_P2P_NET_CHUNKSIZE, 512 KiB

// `node` with the NCCL settings aws-ofi-nccl (v1.16.0 and later) exports on its EFA platforms.
inline DgxSystem aws_ofi_nccl_env(DgxSystem node) {
  node.nccl_buffsize_bytes = kAwsOfiNcclBuffsizeBytes;
  node.p2p_net_chunk_bytes = kAwsOfiNcclP2pNetChunkBytes;
  return node;
}

}  // namespace twinccl::topo::presets
