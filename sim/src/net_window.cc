// The network window of NCCL's net transport: how long a tree or NVLS-tree all_reduce across nodes
// waits for buffer slots when its network messages are small and the network's round trip long.
//
// How it works (NVIDIA/nccl v2.30.7-1): a network connection has NCCL_STEPS = 8 buffer slots
// (src/include/device.h:26); the receiving proxy posts a receive for at most 8 steps beyond the
// last one its GPU consumed (src/transport/net.cc:1519-1532 maxDepth), the sending proxy sends at
// most 8 beyond the last one done (:1323-1358). A slot comes back after the data crossed the
// network one way and the credit (the receiver's posted buffer) crossed it back: one round trip,
// taken here as 2 network hops as the call takes them (network_class.h) [assumed]. So a
// connection moves at most 8 chunks per round trip, and its chunk is enqueue.cc's for the call
// (calcCollChunking, :2222-2294): tree LL one LL step's data (NCCL_LL_LINES_PER_THREAD 8 x
// NCCL_LL_MAX_NTHREADS 512 x 16-byte lines, half data: 32 KiB); tree LL128 one LL128 step's data
// (NCCL_LL128_ELEMS_PER_THREAD 120 x NCCL_LL128_MAX_NTHREADS 640 x 8 bytes = 614400, x 120/128
// data = 576000) halved while bytes / (channels x chunk) < (1 + log2(nodes) + 0.1 ppn) x 64 / ppn
// down to 128 KiB, then x 16 / ppn down to 32 KiB; tree Simple one Simple step (512 KiB);
// NVLS-tree NCCL_NVLS_CHUNKSIZE 128 KiB, halved for small calls per channel x head
// (nvls_pipeline_fill_us's rule). A connection with K > 8 chunks waits (K - 8) / 8 round trips
// beyond the first window (which NCCL's latency holds); where that is longer than the call's
// bandwidth time, the difference is added. Example, aws-p4de-2 (p4de, the plugin's 75 us on
// every hop), 8 MiB tree/LL128 on 4 channels: chunk 72000, K = ceil(2 MiB / 72000) = 30, round
// trip 2 x 83.5 us: (30 - 8) / 8 x 167 = 459 us against a bandwidth time of 233 us.
// On InfiniBand (NCCL's hop figures, 2 x 8.5 us for LL128) or with Simple's 512 KiB steps the
// window is rarely what binds. Not in the tuner's ranking (Channels::all): NCCL's model has no
// such term, so it never changes NCCL's choice.
// On a plugin whose writes wait for the receiver's control message (aws-ofi-nccl's RDMA protocol
// on p5, messages above its 8 KiB eager size) the round trip is the class's slot round trip
// (network_class.h, fitted), and rings pay the window too (ring_net_window_wait_us): a ring
// connection carries (n - 1) steps a loop (2(n - 1) for all_reduce) of one message each (LL128:
// a step's share up to 576000 bytes; Simple: 2-step slices, 4 slots), NCCL_STEPS slots of them
// per (round trip + one message's wire time at the node's NIC rate / channels). The call takes
// the longer of that window, plus the last message's hop and the last node's NVLink chain, and
// NCCL's latency + bandwidth time: the chain's hops run inside the round trips, not after them.
// Example, 32 p5 nodes, all_gather 32 MiB on 8 channels: 255 messages of 16 KiB (17476 bytes on
// the wire, 0.35 us at 50 GB/s), 255 / 8 x (85 + 0.35) + 20 + 7 x 1.9 = 2754 us, + the 5 us launch
// counted separately, where NCCL's model gives 1178 (measured 2700).
#include <algorithm>
#include <cmath>

#include "model.h"
#include "network_class.h"

namespace twinccl::sim::detail {
namespace {

// NCCL's transport constants (device.h, init.cc DEFAULT_*BUFFSIZE; see above). NCCL_STEPS and a
// ring's Simple chunk and slice steps: kNcclSteps, kNcclRingSimple*Steps (nccl_tuning_table.h).
struct NetWindowTable {
  double ll_step_data_bytes;        // 8 x 512 x 16 / 2 = 32 KiB
  double ll128_step_data_bytes;     // 120 x 640 x 8 x 120/128 = 576000
  double ll128_chunk_floor_bytes;   // 131072, then 32768 (enqueue.cc's two loops)
  double ll128_chunk_floor2_bytes;  // 32768
};
constexpr NetWindowTable kWindow{32768.0, 576000.0, 131072.0, 32768.0};

// enqueue.cc's tree/LL128 chunk (calcCollChunking): one LL128 step's data (576000 bytes), halved
// for calls too small for (1 + log2(nodes) + 0.1 ppn) x 64 / ppn chunks a channel.
double tree_ll128_chunk_bytes(const TopologyView& v, double bytes, int channels) {
  double chunk = kWindow.ll128_step_data_bytes;
  const double ppn = v.ranks_per_node;
  const double nsteps = 1.0 + nccl_log2i(v.nodes) + 0.1 * ppn;
  // enqueue.cc divides integers on the left of `<`.
  const auto per = [&](double c) { return std::floor(bytes / (channels * c)); };
  while (per(chunk) < nsteps * 64.0 / ppn && chunk > kWindow.ll128_chunk_floor_bytes) chunk /= 2;
  while (per(chunk) < nsteps * 16.0 / ppn && chunk > kWindow.ll128_chunk_floor2_bytes) chunk /= 2;
  return chunk;
}

// The bytes a chunk of `data_bytes` puts on the wire: LL lines carry half data, LL128's 120 of 128.
double wire_bytes(Protocol protocol, double data_bytes) {
  return data_bytes * kNccl.wire_bytes_per_byte[index_of(protocol)];
}

// Whether a message of `message_data_bytes` waits for the receiver's control message: on a plugin
// that writes a message only into the buffer the receiver named (aws-ofi-nccl's RDMA protocol: a
// class with a slot round trip, network_class.h), one above its eager size on the wire.
bool waits_for_control_message(const NetworkTerms& terms, Protocol protocol,
                               double message_data_bytes) {
  return terms.rdma_slot_round_trip_us > 0.0 &&
         wire_bytes(protocol, message_data_bytes) > terms.eager_max_bytes;
}

// How long a buffer slot takes to come back: for a message that waits for the receiver's control
// message, the class's slot round trip (network_class.h); else 2 network hops [assumed].
double slot_round_trip_us(const TopologyView& v, NcclAlgo algo, Protocol protocol, OpKind kind,
                          double bytes, double message_data_bytes) {
  const NetworkTerms terms = network_terms(v.network);
  if (waits_for_control_message(terms, protocol, message_data_bytes)) {
    return terms.rdma_slot_round_trip_us;
  }
  return 2.0 * nccl_latency_parts(v, algo, protocol, kind, bytes, false).net_hop_us;
}

}  // namespace

double nccl_tree_chunk_bytes(const TopologyView& v, Protocol protocol, double bytes, int channels) {
  return protocol == Protocol::ll      ? kWindow.ll_step_data_bytes
         : protocol == Protocol::ll128 ? tree_ll128_chunk_bytes(v, bytes, channels)
                                       : nccl_simple_step_bytes(v);  // chunkSteps 1 for tree
}

double net_window_wait_us(const TopologyView& v, NcclAlgo algo, Protocol protocol, OpKind kind,
                          double bytes, const ChannelPlan& launched, const NvlsSteps& nvls) {
  if (v.nodes < 2 || kind != OpKind::all_reduce || bytes <= 0.0 || launched.channels < 1 ||
      (algo != NcclAlgo::tree && algo != NcclAlgo::nvls_tree)) {
    return 0.0;
  }
  const bool tree = algo == NcclAlgo::tree;
  if (!tree) check_nvls_steps(nvls, "net_window_wait_us");
  const double algbw = nccl_algbw_gbps(v, launched, algo, protocol, kind, bytes, true);
  const double connections = tree ? launched.channels : nvls.ops;
  const double chunk =
      tree ? nccl_tree_chunk_bytes(v, protocol, bytes, launched.channels) : nvls.chunk_bytes;
  const double chunks = std::ceil(bytes / connections / chunk);
  if (chunks <= kNcclSteps || !(algbw > 0.0)) return 0.0;
  const double round_trip_us = slot_round_trip_us(v, algo, protocol, kind, bytes, chunk);
  const double window_us = (chunks - kNcclSteps) / kNcclSteps * round_trip_us;
  return std::max(0.0, window_us - bytes / (1000.0 * algbw));
}

double ring_net_window_wait_us(const TopologyView& v, NcclAlgo algo, Protocol protocol, OpKind kind,
                               double bytes, const ChannelPlan& launched) {
  const NetworkTerms terms = network_terms(v.network);
  const bool ring_kind =
      kind == OpKind::all_reduce || kind == OpKind::all_gather || kind == OpKind::reduce_scatter;
  if (v.nodes < 2 || algo != NcclAlgo::ring || !ring_kind || !(bytes > 0.0) ||
      launched.channels < 1 || !(terms.rdma_slot_round_trip_us > 0.0)) {
    return 0.0;
  }
  const double n = v.nranks;
  const double connections = launched.channels;
  // One ring step moves 1/n of a channel's share (nccl-tests' bytes: the per-rank buffer of an
  // all_reduce, n x the per-rank count of an all_gather / reduce_scatter).
  const double share = bytes / connections / n;
  const double steps_per_loop = kind == OpKind::all_reduce ? 2.0 * (n - 1.0) : n - 1.0;
  const bool simple = protocol == Protocol::simple;
  const double simple_step = nccl_simple_step_bytes(v);
  const double chunk = protocol == Protocol::ll128 ? kWindow.ll128_step_data_bytes
                       : protocol == Protocol::ll  ? kWindow.ll_step_data_bytes
                                                   : kNcclRingSimpleChunkSteps * simple_step;
  const double loops = std::max(1.0, std::ceil(share / chunk));
  const double step_data = share / loops;
  // Simple sends a step in slices of SLICESTEPS = 2 buffer steps, 4 slots: here one message a step
  // of up to 2 buffer steps, 2 above. Known divergence from NCCL: its slices
  // (nccl_ring_simple_slices, model.h; v2.28.7-1 src/device/prims_simple.h:193-194) cut every step
  // over one minimum slice (32 KiB at a 4 MiB buffer) into 2 messages; counting them moved
  // aws-efa.csv:114 (p5 2 nodes all_gather 128 MiB ring/Simple) from -15.7% to +43.8%, out of its
  // 20% band, while 4 other ring/Simple rows came 7-10 points closer: not adopted
  // (docs/fidelity.md, "Issue 24, one owner of the ring's Simple slices").
  const double messages_per_step =
      simple ? std::max(1.0, std::ceil(step_data / (kNcclRingSimpleSliceSteps * simple_step)))
             : 1.0;
  const double message_data = step_data / messages_per_step;
  if (!waits_for_control_message(terms, protocol, message_data)) return 0.0;
  const double slots = simple ? kNcclSteps / kNcclRingSimpleSliceSteps : kNcclSteps;
  const double messages = steps_per_loop * loops * messages_per_step;
  const double connection_gbps = v.inter_gbps / connections;
  const double cycle_us =
      terms.rdma_slot_round_trip_us +
      (connection_gbps > 0.0 ? wire_bytes(protocol, message_data) / (1000.0 * connection_gbps)
                             : 0.0);
  // After the last window the last message crosses one hop and the last node's NVLink chain.
  const LatencyParts hop = nccl_latency_parts(v, algo, protocol, kind, bytes, false);
  const double window_us =
      messages / slots * cycle_us + hop.net_hop_us + (v.ranks_per_node - 1) * hop.intra_hop_us;
  const double algbw = nccl_algbw_gbps(v, launched, algo, protocol, kind, bytes, true);
  const double model_us = nccl_latency_us(v, algo, protocol, kind, bytes, false) +
                          (algbw > 0.0 ? bytes / (1000.0 * algbw) : 0.0);
  return std::max(0.0, window_us - model_us);
}

}  // namespace twinccl::sim::detail
