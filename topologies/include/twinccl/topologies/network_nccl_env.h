// What a network's own software puts into NCCL's environment where the user set none: the one
// owner of those values (the NCCL buffers, the NVLS chunks), per network class.
//
//   const topo::NetworkNcclEnv env = topo::network_nccl_env(topo::NetworkClass::efa);
//   // env.nccl_buffsize_bytes 8388608, env.nvls_chunk_bytes 524288, env.exporter "aws-ofi-nccl"
//   const topo::NcclBuffer b = topo::nccl_buffsize(t.facts());  // the value a call runs with
//   // b.bytes, b.source: the topology's own fact, the network's exporter, or NCCL's default
//
// Who exports what:
// * aws-ofi-nccl, on every EFA GPU platform (classes efa, efa-v3, efa-sendrecv): at init it puts
//   its platform's `env` map into the environment where the user set none (aws/aws-ofi-nccl
//   v1.21.1 src/platform-aws.cpp:686-688; overwrite false, include/nccl_ofi_environ.h:47-58),
//   before NCCL reads it (NVIDIA/nccl v2.22.3-1 src/init.cc: the net plugin's init :329-330,
//   computeBuffSizes :563-582): NCCL_BUFFSIZE=8388608 and NCCL_P2P_NET_CHUNKSIZE=524288 on p4d,
//   p4de, "p5/p5e", "p5en/p6-b200", "p6-b300" (v1.21.1 :92-93, 106-107, 142-143, 167-168, 187-188;
//   from v1.16.0, commit f3f5c40b; no tag up to v1.15.0 sets either), and NCCL_NVLS_CHUNKSIZE =
//   NCCL_NVLSTREE_MAX_CHUNKSIZE = 524288 on its NVLS platforms (v1.21.1 :144-145, 169-170,
//   189-190; in this map from v1.16.0); p4d/p4de have no NVLS. Older tags set the two by
//   setenv(..., overwrite 0) in platform_init on every AWS platform: NCCL_NVLSTREE_MAX_CHUNKSIZE
//   from v1.8.0-aws (commit 03ead71a: "a max chunk size of 512KiB recovers from the regression" of
//   NCCL 2.19.3's 64 KiB), NCCL_NVLS_CHUNKSIZE from v1.9.0-aws (commit 2de78190; v1.15.0
//   src/platform-aws.cpp:547-558). NCCL reads the first from 2.20, the second from 2.21 (NVIDIA/
//   nccl v2.20.3-1 src/enqueue.cc:1681, v2.21.5-1 src/transport/nvls.cc:233); up to 2.20 an
//   NVLS-tree chunk starts from one Simple step (NCCL_BUFFSIZE / 8, v2.20.3-1 :1684-1716): 512 KiB
//   on every aws-efa row that ran an older pair (4 MiB buffers, or 8 MiB under the 512 KiB cap),
//   as the class gives (docs/fidelity.md, "efaproto round"). Not carried: NCCL_NET_FORCE_FLUSH=0
//   and NCCL_NETDEVS_POLICY (no model input); NCCL_PROTO=simple, which the plugin sets only where
//   EFA refuses 128-byte ordering (docs/fidelity.md, "aws-ofi-nccl's protocol choice").
// * GCP's gIB environment for A3 Ultra and A4 (class roce-gib): NCCL_NVLS_CHUNKSIZE=524288 alone
//   (GoogleCloudPlatform/cluster-toolkit@1047080 examples/machine-learning/a4-highgpu-8g/
//   a4high-vm.yaml:293, a3-ultragpu-8g/nemo-framework/Dockerfile:34), so from 4 nodes NCCL's 64
//   KiB NVLS-tree cap still holds there.
// * Every other class: nothing (NCCL's defaults).
//
// The two buffers are also topology facts (`--set nccl_buffsize_bytes=...`, topology files,
// per-row settings), because a run with an older plugin or the user's own NCCL_BUFFSIZE undoes
// the export: a fact > 0 wins, 0 means "not set here" and takes the network's export, else
// NCCL's default; NCCL's own value is written as itself (`--set nccl_buffsize_bytes=4194304`).
// The AWS presets write the exported values as facts (topologies/presets/aws_efa.h), so `topo
// show --format json` carries them; a hand-written topology of an EFA class without them runs
// with the same. The NVLS chunks have no setting: the class's export is what runs.
#pragma once

#include "twinccl/topologies/topology.h"

namespace twinccl::topo {

struct NetworkNcclEnv {
  double nccl_buffsize_bytes = 0.0;        // NCCL_BUFFSIZE; 0 = not exported (NCCL's)
  double p2p_net_chunk_bytes = 0.0;        // NCCL_P2P_NET_CHUNKSIZE; 0 = not exported
  double nvls_chunk_bytes = 0.0;           // NCCL_NVLS_CHUNKSIZE; 0 = not exported
  double nvls_tree_max_chunk_bytes = 0.0;  // NCCL_NVLSTREE_MAX_CHUNKSIZE; 0 = not exported
  const char* exporter = "";               // who exports them ("" = nobody)
};

inline NetworkNcclEnv network_nccl_env(NetworkClass network) {
  switch (network) {
    case NetworkClass::efa:
    case NetworkClass::efa_v3:
      return {8388608.0, 524288.0, 524288.0, 524288.0, "aws-ofi-nccl"};
    case NetworkClass::efa_sendrecv:  // p4d/p4de: no NVLS
      return {8388608.0, 524288.0, 0.0, 0.0, "aws-ofi-nccl"};
    case NetworkClass::roce_gib:
      return {0.0, 0.0, 524288.0, 0.0, "GCP's gIB environment"};
    case NetworkClass::infiniband:
    case NetworkClass::roce:
    case NetworkClass::tcpxo:
    case NetworkClass::tcpx:
      return {};
  }
  return {};
}

// One NCCL buffer setting as a call runs it, and where it came from.
struct NcclBuffer {
  enum class Source { topology, network, nccl };
  double bytes = 0.0;
  Source source = Source::nccl;
};

// `fact` (the topology's, 0 = unset), else the network's export `exported`, else NCCL's `nccl`.
inline NcclBuffer nccl_buffer(double fact, double exported, double nccl) {
  if (fact > 0.0) return {fact, NcclBuffer::Source::topology};
  if (exported > 0.0) return {exported, NcclBuffer::Source::network};
  return {nccl, NcclBuffer::Source::nccl};
}

inline NcclBuffer nccl_buffsize(const TopologyFacts& facts) {
  return nccl_buffer(facts.nccl_buffsize_bytes, network_nccl_env(facts.network).nccl_buffsize_bytes,
                     kNcclDefaultBuffsizeBytes);
}

inline NcclBuffer nccl_p2p_net_chunk(const TopologyFacts& facts) {
  return nccl_buffer(facts.p2p_net_chunk_bytes, network_nccl_env(facts.network).p2p_net_chunk_bytes,
                     kNcclDefaultP2pNetChunkBytes);
}

}  // namespace twinccl::topo
