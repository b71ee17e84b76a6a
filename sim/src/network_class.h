// Internal: what a scale-out network's class changes in NCCL's cost model (topology fact
// `network`, topology.h NetworkClass): the latency of one network hop per protocol, as the call
// takes it and as NCCL ranks by it, the protocols and NVLS chunks the cloud's NCCL environment
// sets, and what a call pays that NCCL's model has no term for (TCPX's floor and delivered rate).
//
// How it works. NCCL's tuning model (graph/tuning.cc hwLat[NCCL_HW_NET]) gives one network hop
// 2.7 / 4.0 / 14 us (ring LL / LL128 / Simple; tree 5.0 / 8.5 / 14), measured on InfiniBand
// through its IB verbs transport; RoCE runs the same transport and keeps them. A net plugin
// reports its own per-message latency to NCCL (ncclNetProperties_t.latency), which NCCL adds to
// every network hop it ranks by, twice on Simple for the flush (v2.30.7-1 tuning.cc:389-391
// `interLat += graphs[a]->latencyInter`; so from v2.18.3-1 :204-206, before it the plugin's
// figure replaced NCCL's: v2.17.1-1 :179; the newest form is modelled). aws-ofi-nccl reports
// (v1.21.1 src/platform-aws.cpp platform_data_map): 75 us on p4d/p4de (:87, :101) and p5/p5e
// (:137), 35 us on p5en/p6-b200 (:154). What a hop takes, where the provider measured it:
//   efa (p5, p5e: EFAv2, the plugin's RDMA protocol) AWS's tuner (src/tuner/nccl_ofi_model.cpp
//        model_platform_params P5 row: net_lat 20 us, "2 nodes, 8B RDMA w/imm lat"; Simple adds
//        TUNER_NET_COMP_OVERHEAD 3 us, "~2us cost in the device and ~1us to write that
//        completion up to the host stack"): 20 / 20 / 23 us, every algorithm.
//   efa-v3 (p5en EFAv3, p6-b200 EFAv4: one platform of the plugin, platform-aws.cpp:151 "p5en/
//        p6-b200", hardware completion counters) the tuner's P5en row, net_lat 18 us: 18 / 18 /
//        21 us [assumed for p6-b200, which the tuner's model has no row for].
//   efa-sendrecv (p4d, p4de: EFA v1, the plugin's SENDRECV protocol, platform-aws.cpp:88) no
//        tuner row: the hop is NCCL's model with the plugin's 75 us, as NCCL ranks it.
//   tcpxo (GCP A3 Mega) no vendor per-message figure; Google's own published 2-node all_gather
//        (GoogleCloudPlatform/cluster-toolkit@1047080 examples/gke-a3-megagpu/README.md:113-148,
//        GCP's default profile) gives one: NCCL's Simple 14 us + 18 us, the per-hop extra that
//        brings that log's 12 rows below 1 MiB to a geometric-mean error of 0 [fitted on those
//        rows only; judged on the held-out A3 Mega rows: docs/fidelity.md, "GCP's environments"].
//        LL and LL128 keep NCCL's figure (no TCPXO figure for them).
//   tcpx (GCP A3 High) NCCL's IB figures per hop; the call pays a floor of its own and moves 0.85
//        of the NIC's rate (call_floor_us, delivered_fraction, below).
//   Both plugins report latency 0 to NCCL (nccl-plugin-gpudirecttcpx@4b8ea7f src/net_tcpx.cc:737;
//   nccl-plugin-gpudirect-tcpxo@04815d1 tcpdirect_plugin/fastrak_offload/nccl_shim.cc:966), so
//   NCCL ranks with its own IB figures and the fitted hop is the call's alone.
// NCCL ranks with the plugin's figure at 2 nodes, where AWS's region tuner hands the choice back
// to NCCL (v1.21.1 src/tuner/nccl_ofi_regions.cpp:2011-2013 "Skip when two nodes or lesser");
// from 3 nodes its regions choose: on p5/p5e (`efa`) the model follows them (efa_region_tuner.cc,
// all_reduce at 8 GPUs a node), on p5en, p6-b200 and p6-b300 (`efa-v3`) too (all_reduce,
// all_gather, reduce_scatter: their own tables).
// GCP's NCCL profiles set NCCL_PROTO=Simple (container-engine-accelerators gpudirect-tcpxo
// nccl-env-profile.sh; gpudirect-tcpx nccl-config.yaml), so those classes rank Simple alone; a
// protocol forced by name (--proto LL128, the ll128 profile) still runs, and a user's own
// NCCL_PROTO list (--proto 'Simple,LL128', a log's NCCL_PROTO) replaces the profile's, as the
// variable set after `source nccl-env-profile*.sh` does: NCCL reads one value (NVIDIA/nccl
// v2.30.7-1 src/graph/tuning.cc:453-461). [TCPXO's profiles also differ in their tuner config and
// guest-config checker files (NCCL_TUNER_CONFIG_PATH,
// NCCL_SHIMNET_GUEST_CONFIG_CHECKER_CONFIG_FILE, best-practice.md:80-87): a real run takes the
// profile of the protocols wanted.] [TCPXO's default profile is Simple,LL128 with NVLS on from
// plugin v1.0.12 (nccl-plugin-gpudirect-tcpxo@04815d1 tcpxo_scripts/nccl-env-profile.sh:51,
// container-engine-accelerators@992db81 gpudirect-tcpxo/ best-practice.md:60-87;
// nccl-env-profile-simple.sh keeps Simple and NVLS off), with a tuner plugin whose table is not
// public: the model keeps the Simple profile; docs/fidelity.md.]
#pragma once

#include <algorithm>

#include "twinccl/sim/timing.h"
#include "twinccl/topologies/network_nccl_env.h"
#include "twinccl/topologies/topology.h"

namespace twinccl::sim::detail {

struct NetworkHop {
  double ll_us, ll128_us, simple_us;  // the hop's time; 0 = NCCL's ranking figure for it
  double plugin_latency_us;           // the net plugin's reported latency NCCL ranks with
};

// Everything a network class changes, one row per class (network_terms): the only place a class
// is told apart.
struct NetworkTerms {
  NetworkHop hop{0.0, 0.0, 0.0, 0.0};
  // The NVLS chunks the network's NCCL environment exports, 0 = NCCL's defaults:
  // NCCL_NVLS_CHUNKSIZE (128 KiB; NVLS-tree starts from it, NVLS from NCCL 2.21: nvls_steps.cc
  // nccl_nvls_chunk_bytes; the plugin exports it on one node too) and NCCL_NVLSTREE_MAX_CHUNKSIZE
  // (the NVLS-tree cap: 64 KiB from 4 nodes, else none; NVIDIA/nccl v2.27.7-1
  // src/enqueue.cc:2023-2026). Their one owner is topo::network_nccl_env
  // (topologies/.../network_nccl_env.h), with the buffers the same software exports.
  double nvls_chunk_bytes = 0.0;
  double nvls_tree_max_chunk_bytes = 0.0;
  // Whether a network hop delivers a step of all channels' in-flight chunks as a whole (the
  // NVLS-tree network fill, nvls_tree_net_fill.cc).
  bool queues_whole_steps = false;
  // Host time one network completion costs the GPU's proxy thread, us (p2p_net_messages.cc); 0
  // where no public figure gives one (NCCL's own IB/RoCE transport).
  double completion_host_us = 0.0;
  // What a call across nodes pays that NCCL's model has no term for (the call's time only, never
  // NCCL's ranking): a floor, us, and the share of the NIC's line rate it delivers (the default
  // of a topology's nic_delivered_share, which the view resolves: topology_view.cc).
  double call_floor_us = 0.0;
  double delivered_fraction = 1.0;
  // The NCCL_PROTO the cloud's NCCL profile sets ("" = none; NCCL_PROTO syntax, read with
  // sim::nccl_proto_list) and whose profile it is; sim::network_nccl_proto returns both. A protocol
  // forced by name, or a run's own NCCL_PROTO (any value), replaces it.
  const char* nccl_proto = "";
  const char* nccl_proto_profile = "";
  // A net plugin that writes a message only into a buffer the receiver's control message named
  // (aws-ofi-nccl's RDMA protocol): the round trip a buffer slot takes, us, and the largest
  // message it sends eagerly without one; 0 = no such protocol (the rule: net_window.cc
  // net_message_waits_for_control).
  double rdma_slot_round_trip_us = 0.0;
  double eager_max_bytes = 0.0;
  // NCCL's own IB verbs transport carries the class (no net plugin): it merges a card's ports
  // into one device from 2.20.3 (NCCL_IB_MERGE_NICS), where a plugin's network gets NCCL's
  // virtual devices from 2.24 (topology_view.cc nccl_nets).
  bool nccl_ib_transport = false;
};

// aws-ofi-nccl's exports (NCCL_NVLS_CHUNKSIZE = NCCL_NVLSTREE_MAX_CHUNKSIZE = 524288 on every
// NVLS-capable EFA platform, and the buffers) have one owner, topo::network_nccl_env, which cites
// them; p4d/p4de have no NVLS. On the EFA classes a hop queues whole steps: AWS's tuner says EFA's
// throughput saturates once a rank's in-flight data fills the link, and more in flight "only adds
// queuing latency" (aws-ofi-nccl v1.21.1 src/tuner/nccl_ofi_regions.cpp:2236-2242) [assumed: the
// first step of every channel and head, all in flight at once, queues whole at each hop];
// InfiniBand and RoCE: no (the same term breaks asserted IB figures, nccl-tests#283's 248 x 8 H200
// and #309's 4-node H100: docs/fidelity.md, NVLS-tree's network part). An EFA completion costs "~2
// us in the device and ~1 us to write that completion up to the host stack" (v1.16.3
// include/nccl_ofi_param.h:313-317): the 1 us host part (the device part is in the hop).
inline void take_nvls_chunks(NetworkTerms& t, topo::NetworkClass network) {
  const topo::NetworkNcclEnv env = topo::network_nccl_env(network);
  t.nvls_chunk_bytes = env.nvls_chunk_bytes;
  t.nvls_tree_max_chunk_bytes = env.nvls_tree_max_chunk_bytes;
}

inline NetworkTerms efa_terms(NetworkHop hop, topo::NetworkClass network) {
  NetworkTerms t;
  t.hop = hop;
  take_nvls_chunks(t, network);
  t.queues_whole_steps = true;
  t.completion_host_us = 1.0;
  return t;
}

inline NetworkTerms network_terms(topo::NetworkClass network) {
  NetworkTerms t;
  switch (network) {
    case topo::NetworkClass::efa: {
      NetworkTerms efa = efa_terms({20.0, 20.0, 23.0, 75.0}, network);
      // aws-ofi-nccl's RDMA protocol (p5/p5e): a message above eager_max_size (8 KiB, v1.16.3
      // include/nccl_ofi_param.h:256; eager only with no write in flight, src/nccl_ofi_rdma.cpp:
      // 5916-5919) is written into the buffer the receiver's control message named. A slot's
      // round trip: data one way, NCCL's receive proxy's phases (received, transmitted, done,
      // then the next irecv: one per pass, v2.27.7-1 src/transport/net.cc:1306-1500), the
      // control message back, the send proxy's next CQ poll. 83.5 us is FITTED [no vendor
      // figure; AWS's tuner gives 20 us one way]: least squares of the relative errors of the 5
      // p5 all_gather 32 MiB rows at 2-32 nodes (aws-efa.csv, reason "fit:"), scanned in 0.5 us
      // steps with the slot cycle that counts the GPU's write (net_window.cc slot_window_us; 85
      // before it), judged on the rest (docs/fidelity.md, efastep and slotgpu rounds).
      efa.rdma_slot_round_trip_us = 83.5;
      efa.eager_max_bytes = 8192.0;
      return efa;
    }
    case topo::NetworkClass::efa_v3:
      // No slot round trip though p5en/p6 run p5's RDMA protocol: not adopted (p5's 85 us moved 7
      // p6-b300 rows toward, 5 away, broke 5 asserted; docs/fidelity.md, efadata round), open.
      return efa_terms({18.0, 18.0, 21.0, 35.0}, network);
    case topo::NetworkClass::efa_sendrecv:  // p4d/p4de: no NVLS
      t.hop = {0.0, 0.0, 0.0, 75.0};
      t.completion_host_us = 1.0;
      return t;
    case topo::NetworkClass::tcpxo:
      t.hop = {0.0, 0.0, 14.0 + 18.0, 0.0};
      t.nccl_proto = "Simple";
      t.nccl_proto_profile =
          "GCP's TCPXO nccl-env-profile-simple.sh, and nccl-env-profile.sh before plugin v1.0.12; "
          "Simple,LL128 from v1.0.12";
      return t;
    case topo::NetworkClass::tcpx:
      // GPUDirect-TCPX (A3 High), from Google's published 2-node all_gather (cluster-toolkit@
      // 1047080 examples/gke-a3-highgpu/multi-node-test-plan.md:118-133, GCP's TCPX config: Ring,
      // Simple, 8 channels, the TX/RX core bindings), which no vendor figure explains:
      // * a floor of 880 us a call across nodes: 1 - 8 MiB all take ~0.94 - 1.0 ms where NCCL's
      //   model gives 85 - 157 us; 880 us brings its 1 - 4 MiB rows to a geometric-mean error of
      //   0 [fitted on those 3 rows]. A per-call cost, not a per-hop one: a round trip of 2 x 880
      //   us per 8 buffer slots (NCCL_STEPS) of 512 KiB would hold 8 channels to ~19 GB/s; that
      //   run moves 71.
      // * a NIC that delivers 0.85 of its line rate: what then matches that run's 512 MiB row
      //   (70.9 GB/s busbw of 4 x 200G) [fitted on that row]. NCCL reads the NIC's speed from
      //   sysfs (nccl-plugin-gpudirecttcpx@4b8ea7f src/net_tcpx.cc:705-721) and ranks with it.
      // Judged on the held-out dstack A3 High rows (docs/fidelity.md, "GCP's environments").
      t.call_floor_us = 880.0;
      t.delivered_fraction = 0.85;
      t.nccl_proto = "Simple";
      t.nccl_proto_profile = "GCP's TCPX nccl-config.yaml";
      return t;
    case topo::NetworkClass::roce_gib:
      // GCP's gIB environment: NCCL_NVLS_CHUNKSIZE alone (network_nccl_env cites it).
      take_nvls_chunks(t, network);
      return t;
    case topo::NetworkClass::infiniband:
    case topo::NetworkClass::roce:
      t.nccl_ib_transport = true;
      return t;
  }
  return t;
}

// One network hop of `protocol` as NCCL ranks it: its own figure `nccl_us` plus the plugin's
// latency (twice on Simple), plus a topology's `network_hop_extra_us`, never below 0.
inline double network_rank_hop_us(topo::NetworkClass network, Protocol protocol, double nccl_us,
                                  double extra_us = 0.0) {
  const double plugin = network_terms(network).hop.plugin_latency_us;
  return std::max(0.0, nccl_us + plugin * (protocol == Protocol::simple ? 2.0 : 1.0) + extra_us);
}

// One network hop of `protocol` on `network` as the call takes it, given NCCL's figure for it,
// plus a topology's `network_hop_extra_us` (what `twinccl calibrate` fits from multi-node small
// rows), never below 0: the provider's measured hop where it has one, else NCCL's ranking figure.
inline double network_hop_us(topo::NetworkClass network, Protocol protocol, double nccl_us,
                             double extra_us = 0.0) {
  const NetworkHop h = network_terms(network).hop;
  const double own = protocol == Protocol::ll      ? h.ll_us
                     : protocol == Protocol::ll128 ? h.ll128_us
                                                   : h.simple_us;
  if (own > 0.0) return std::max(0.0, own + extra_us);
  return network_rank_hop_us(network, protocol, nccl_us, extra_us);
}

}  // namespace twinccl::sim::detail
