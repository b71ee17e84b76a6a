// The network window of NCCL's net transport: how long a tree or NVLS-tree all_reduce across nodes
// waits for buffer slots when its network messages are small and the network's round trip long.
//
// How it works (NVIDIA/nccl; this paragraph's line numbers are v2.30.7-1's, slot_window_us's
// below are the same code at v2.27.7-1's): a network connection has NCCL_STEPS = 8 buffer slots
// (src/include/device.h:26); the receiving proxy posts a receive for at most 8 steps beyond the
// last one its GPU consumed (src/transport/net.cc:1519-1532 maxDepth), the sending proxy sends at
// most 8 beyond the last one done (:1323-1358). A slot comes back after the data crossed the
// network one way and the credit (the receiver's posted buffer) crossed it back: one round trip.
// So a connection moves at most 8 chunks per round trip, and its chunk is enqueue.cc's for the call
// (calcCollChunking, :2222-2294): tree LL one LL step's data (NCCL_LL_LINES_PER_THREAD 8 x
// NCCL_LL_MAX_NTHREADS 512 x 16-byte lines, half data: 32 KiB); tree LL128 one LL128 step's data
// (NCCL_LL128_ELEMS_PER_THREAD 120 x NCCL_LL128_MAX_NTHREADS 640 x 8 bytes = 614400, x 120/128
// data = 576000) halved while bytes / (channels x chunk) < (1 + log2(nodes) + 0.1 ppn) x 64 / ppn
// down to 128 KiB, then x 16 / ppn down to 32 KiB (on AMD GPUs RCCL's step: 28 x 256 x 8 x 7/8 =
// 50176 data bytes, 64-byte lines of 56 data; rccl_ll128_step_data_bytes, the same loops at
// ROCm/rccl@0cbce2a src/enqueue.cc:1899-1904); tree Simple one Simple step (512 KiB);
// NVLS-tree NCCL_NVLS_CHUNKSIZE 128 KiB, halved for small calls per channel x head
// (nvls_pipeline_fill_us's rule). One owner prices every connection's slots (slot_window_us): a
// connection passes at most 8 messages per (slot round trip + one message's wire time at the
// node's NIC rate / connections + the sending GPU's write of it at the call's rate); how long a
// slot takes to come back is slot_round_trip_us's alone (2 network hops as the call takes them; on
// aws-ofi-nccl's RDMA protocol the class's fitted round trip above its 8 KiB eager size, nothing
// within it). What differs between the callers is how a stream's windows meet NCCL's time, argued
// at each caller from NCCL's code:
// * tree, NVLS-tree (net_window_wait_us): K chunks a connection; the (K - 8) / 8 windows after
//   the first (whose messages are written and sent at once, their one-way trip the hop NCCL's
//   latency charges) beside the bandwidth time, the longer binds. Example, aws-p4de-2 (the
//   plugin's 75 us on every hop), 8 MiB tree/LL128 on 4 channels: chunk 72000, K = ceil(2 MiB /
//   72000) = 30, round trip 2 x 83.5 us, 76800 wire bytes at 50 / 4 GB/s, a bandwidth time of
//   233 us (7.8 us a chunk): (30 - 8) / 8 x (167 + 6.1 + 7.8) = 498 us.
// * ring (ring_net_window_wait_us, only where a message waits for a control message): every window
//   a round trip, then one hop and the last node's NVLink chain, against NCCL's latency +
//   bandwidth time (a ring step forwards what the step before brought; the chain's hops run inside
//   the round trips). A ring connection carries (n - 1) steps a loop (2(n - 1) for all_reduce) of
//   one message each (LL128: a step's share up to 576000 bytes; Simple: NCCL's slices, 2 a step
//   over one minimum slice, 4 slots). Example, 32 p5 nodes, all_gather 32 MiB on 8 channels: 255
//   messages of 16 KiB (17476 bytes on the wire, 0.36 us at 384 / 8 = 48 GB/s; the GPU writes one
//   in 0.45 us), 255 / 8 x (83.5 + 0.36 + 0.45) + 20 + 7 x 2 (LL128's 1.9 us hop, at least the
//   EPYC hosts' 2 us network post) = 2721 us, + the 5 us launch counted separately, where NCCL's
//   model gives 1178 (measured 2700).
// * NVLS-tree's first message (nvls_tree_first_message_wait_us): once per call, the round trip
//   less the hop NCCL's latency charges, as p2p's first batch (p2p_net_messages.cc).
// On InfiniBand (NCCL's hop figures, 2 x 8.5 us for LL128) or with Simple's 512 KiB steps the
// window is rarely what binds. Nor does an NVLS-tree window on p5: enqueue.cc's halving
// (v2.27.7-1 :2027-2030) leaves a connection (channel x head, 128 on a p5 node) more than 8 chunks
// only at chunks of 128 KiB and up (calls over 128 MiB at 2 nodes), each 44 us on the wire at 384
// / 128 GB/s, so its 8 slots outrun the 83.5 us round trip (docs/fidelity.md, "one owner of the
// slot window"). Not in the tuner's ranking (Channels::all): NCCL's model has no such term, so it
// never changes NCCL's choice.
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
  double chunk = rccl_ll128_step_data_bytes(v).value_or(kWindow.ll128_step_data_bytes);
  const double ppn = v.ranks_per_node;
  const double nsteps = 1.0 + nccl_log2i(v.nodes) + 0.1 * ppn;
  // enqueue.cc divides integers on the left of `<`.
  const auto per = [&](double c) { return std::floor(bytes / (channels * c)); };
  while (per(chunk) < nsteps * 64.0 / ppn && chunk > kWindow.ll128_chunk_floor_bytes) chunk /= 2;
  while (per(chunk) < nsteps * 16.0 / ppn && chunk > kWindow.ll128_chunk_floor2_bytes) chunk /= 2;
  return chunk;
}

// The bytes a chunk of `data_bytes` puts on the wire: LL lines carry half data, LL128's 120 of 128
// (RCCL's on AMD GPUs: 56 of 64).
double wire_bytes(const TopologyView& v, Protocol protocol, double data_bytes) {
  return data_bytes * protocol_wire_bytes_per_byte(v, protocol);
}

// One connection's stream of network messages through its buffer slots (slot_window_us).
struct SlotStream {
  double messages = 0.0;         // network messages the connection carries in the call
  double slots = kNcclSteps;     // the buffer slots they cycle through
  double round_trip_us = 0.0;    // how long a slot takes to come back (slot_round_trip_us)
  double message_wire_us = 0.0;  // one message's wire time at the connection's share of the NICs
  double message_gpu_us = 0.0;   // the sending GPU's time to write one message at the call's rate
};

// How long a slot takes to come back after its message left, us; 0 where the sender waits for no
// slot beyond the GPU's own rate:
// * aws-ofi-nccl's RDMA protocol (a class with a slot round trip, network_class.h), a message above
//   its eager size on the wire: the class's slot round trip (the write waits for the receiver's
//   control message, re-posted only after the receiving GPU freed the slot).
// * the same protocol, a message within the eager size: 0. The plugin sends it at once into its own
//   bounce buffers (aws/aws-ofi-nccl v1.16.3 src/nccl_ofi_rdma.cpp:5915-5918: eager when no control
//   message is there yet, size <= eager_max_size and no write in flight; 64-128 of them posted,
//   include/nccl_ofi_param.h:217-224), whatever NCCL's receiver has posted; the p5 2-node
//   all_reduce 256 KiB ring/LL row (aws-efa.csv:19: 30 steps a connection, 4 KiB on the wire)
//   takes 128 us, where 4 windows of even 2 x 20 us hops would give ~183.
// * any other net transport (NCCL's IB verbs: the sender writes only into a buffer the receiver's
//   posted receive advertised, NVIDIA/nccl v2.27.7-1 src/transport/net_ib.cc:2122-2128 ncclIbIsend
//   "Wait for the receiver to have posted the corresponding receive"; aws-ofi-nccl's SENDRECV
//   protocol on p4d/p4de): 2 network hops as the call takes them (network_class.h) [assumed], the
//   credit back and the data out.
double slot_round_trip_us(const TopologyView& v, NcclAlgo algo, Protocol protocol, OpKind kind,
                          double bytes, double message_data_bytes) {
  const NetworkTerms terms = network_terms(v.network);
  if (terms.rdma_slot_round_trip_us > 0.0) {
    return net_message_waits_for_control(v.network, wire_bytes(v, protocol, message_data_bytes))
               ? terms.rdma_slot_round_trip_us
               : 0.0;
  }
  return 2.0 * nccl_latency_parts(v, algo, protocol, kind, bytes, false).net_hop_us;
}

// A connection's stream of `messages` messages of `message_data_bytes` through `slots` slots; the
// connection moves 1 / `connections` of the node's NIC rate (every channel's connections share
// the node's NICs). The caller sets the GPU's write (message_gpu_us: the call's bandwidth time
// over the messages the connection carries in the call) once it knows a slot waits at all.
SlotStream slot_stream(const TopologyView& v, NcclAlgo algo, Protocol protocol, OpKind kind,
                       double bytes, double connections, double messages, double message_data_bytes,
                       double slots) {
  SlotStream s;
  s.messages = messages;
  s.slots = slots;
  s.round_trip_us = slot_round_trip_us(v, algo, protocol, kind, bytes, message_data_bytes);
  const double connection_gbps = v.inter_gbps / connections;
  s.message_wire_us = connection_gbps > 0.0
                          ? wire_bytes(v, protocol, message_data_bytes) / (1000.0 * connection_gbps)
                          : 0.0;
  return s;
}

// The one owner of the slot window: a connection sends message k + slots only once message k's
// slot came back, so its messages pass at most `slots` per slot cycle. A cycle is the round trip,
// one message's wire time and the sending GPU's time to write the message: the GPU refills the
// slot only after the send that used it completed, and the proxy sends a step only once the GPU
// wrote all of it, so the write and the wire run one after the other, never beside each other
// (the receiver's GPU reads the step meanwhile, inside the round trip: its receive for the slot
// is re-posted only when it is done). NCCL's side (NVIDIA/nccl v2.27.7-1 src/transport/net.cc):
// the send proxy posts a step only while fewer than NCCL_STEPS are unfinished (sendProxyProgress
// :1127 maxDepth = NCCL_STEPS, :1139 `sub->posted < sub->done + maxDepth`), sends it only when
// the GPU's tail passed it (:1166 `*recvTail > tail`; LL: every line's flag) and gives the slot
// back to the GPU only when the send tested done (:1223-1238 `*sendHead = sub->base +
// sub->done`); the receive proxy posts a receive only for a slot its GPU freed
// (recvProxyProgress :1305, :1318 `sub->posted >= sub->done + maxDepth` stops); the plugin's
// side: the write waits for the receiver's control message (see slot_round_trip_us). The GPU's
// write is negligible at the messages the round trip was fitted on (16 KiB, 0.7 us of 85) and
// binds where the window and the GPU's rate are close: p5 all_gather 16 nodes 256 MiB on 8
// channels, 127 messages of 256 KiB, each 5.8 us on the wire and 7.1 us of the GPU's 907 us:
// 127 / 8 x (83.5 + 5.8 + 7.1) = 1531 us, + the hop and the last node's NVLink chain 1565 us,
// where the round trip and the wire alone (85 us) gave 1474, under NCCL's latency + bandwidth
// time of 1480 (measured 1849).
double slot_window_us(const SlotStream& s) {
  if (!(s.round_trip_us > 0.0) || !(s.messages > 0.0)) return 0.0;
  return s.messages / s.slots * (s.round_trip_us + s.message_wire_us + s.message_gpu_us);
}

}  // namespace

double nccl_tree_chunk_bytes(const TopologyView& v, Protocol protocol, double bytes, int channels) {
  return protocol == Protocol::ll      ? kWindow.ll_step_data_bytes
         : protocol == Protocol::ll128 ? tree_ll128_chunk_bytes(v, bytes, channels)
                                       : nccl_simple_step_bytes(v);  // chunkSteps 1 for tree
}

// Tree and NVLS-tree: each connection carries K chunks, one message a chunk through all 8 slots
// (enqueue.cc:1986-1987: chunkSteps = sliceSteps = 1 off the ring's Simple), all of them pieces of
// the caller's buffer, ready as the GPU reaches them. The first window's 8 messages go out as soon
// as they are written and their one-way trip is the network hop NCCL's latency charges; what the
// slots add is the (K - 8) / 8 windows after it, beside the bandwidth time (the longer binds).
double net_window_wait_us(const TopologyView& v, NcclAlgo algo, Protocol protocol, OpKind kind,
                          double bytes, const ChannelPlan& launched, const NvlsSteps& nvls) {
  if (v.nodes < 2 || kind != OpKind::all_reduce || bytes <= 0.0 || launched.channels < 1 ||
      (algo != NcclAlgo::tree && algo != NcclAlgo::nvls_tree)) {
    return 0.0;
  }
  const bool tree = algo == NcclAlgo::tree;
  if (!tree) check_nvls_steps(nvls, "net_window_wait_us");
  const double algbw = nccl_algbw_gbps(v, launched, algo, protocol, kind, bytes, true);
  // NVLS-tree: one network connection per channel and NVLS head (its GPU is the head's network
  // rank; NVIDIA/nccl v2.27.7-1 src/transport/nvls.cc:210-211 connects nvls.treeUp/treeDown through
  // the same ncclTransportP2pConnect as the tree), one chunk per loop (enqueue.cc:2081-2083
  // ncclPatternNvlsTree: nstepsPerLoop 1, loops = bytes / (channels x heads x chunk)).
  const double connections = tree ? launched.channels : nvls.ops;
  const double chunk =
      tree ? nccl_tree_chunk_bytes(v, protocol, bytes, launched.channels) : nvls.chunk_bytes;
  const double chunks = std::ceil(bytes / connections / chunk);
  if (chunks <= kNcclSteps || !(algbw > 0.0)) return 0.0;
  const double bandwidth_us = bytes / (1000.0 * algbw);
  SlotStream after_first = slot_stream(v, algo, protocol, kind, bytes, connections,
                                       chunks - kNcclSteps, chunk, kNcclSteps);
  after_first.message_gpu_us = bandwidth_us / chunks;  // every chunk's write, the first 8 too
  return std::max(0.0, slot_window_us(after_first) - bandwidth_us);
}

// Ring: a connection carries (n - 1) steps a loop (2 (n - 1) for all_reduce), each the data it
// received the step before (NVIDIA/nccl v2.27.7-1 src/device/all_gather.h:62 runRing:
// directRecvCopyDirectSend per step), so a window's messages do not stand ready at the start as a
// tree's chunks do: every window, the first too, is a slot round trip, and the call ends one hop
// and the last node's NVLink chain after the last window. The slot window is compared with NCCL's
// latency + bandwidth time (the longer binds: in the window-bound regime the chain's hops run
// inside the round trips). Only where a message waits for the receiver's control message (a class
// with a slot round trip): on other transports the 2-hop window [tried] is under NCCL's ring
// latency, which already charges a hop a step (docs/fidelity.md, "one owner of the slot window").
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
  const double chunk = protocol == Protocol::ll128
                           ? rccl_ll128_step_data_bytes(v).value_or(kWindow.ll128_step_data_bytes)
                       : protocol == Protocol::ll ? kWindow.ll_step_data_bytes
                                                  : kNcclRingSimpleChunkSteps * simple_step;
  const double loops = std::max(1.0, std::ceil(share / chunk));
  const double step_data = share / loops;
  // Simple sends a step in slices of SLICESTEPS = 2 buffer steps, 4 slots, each slice its own
  // message: NCCL's slices (nccl_ring_simple_slices, their one owner; v2.28.7-1
  // src/device/prims_simple.h:193-194) cut every step over one minimum slice (32 KiB at a 4 MiB
  // buffer) into 2. Once a known divergence here (a step was one message of up to 2 buffer steps):
  // NCCL's rule sent p5 2 nodes all_gather 128 MiB (aws-efa.csv:114) to +43.8% as ring/Simple, a
  // size NCCL's ranking gives LL128 since the hosts' network post is priced (docs/fidelity.md,
  // "Issue 24, one owner of the ring's Simple slices" and "The host's network post").
  const double messages_per_step = simple ? nccl_ring_simple_slices(v, step_data).slices : 1.0;
  const double slots = simple ? kNcclSteps / kNcclRingSimpleSliceSteps : kNcclSteps;
  const double messages = steps_per_loop * loops * messages_per_step;
  SlotStream stream = slot_stream(v, algo, protocol, kind, bytes, connections, messages,
                                  step_data / messages_per_step, slots);
  // Eager messages wait for no slot: nothing to price, NCCL's rate not needed.
  if (!(stream.round_trip_us > 0.0)) return 0.0;
  const double algbw = nccl_algbw_gbps(v, launched, algo, protocol, kind, bytes, true);
  const double bandwidth_us = algbw > 0.0 ? bytes / (1000.0 * algbw) : 0.0;
  stream.message_gpu_us = bandwidth_us / messages;
  const double slots_us = slot_window_us(stream);
  if (!(slots_us > 0.0)) return 0.0;
  const LatencyParts hop = nccl_latency_parts(v, algo, protocol, kind, bytes, false);
  const double window_us = slots_us + hop.net_hop_us + (v.ranks_per_node - 1) * hop.intra_hop_us;
  const double model_us = nccl_latency_us(v, algo, protocol, kind, bytes, false) + bandwidth_us;
  return std::max(0.0, window_us - model_us);
}

// NVLS-tree: the call's first network message waits for the receiver's control message (the
// p2p batch's first-message wait, p2p_net_messages.cc, on the same transport and for the same
// reason): each head's receive proxy posts its receives when the call starts (NVIDIA/nccl
// v2.27.7-1 src/transport/net.cc:1305-1367 recvProxyProgress; the NVLS-tree's network hops are
// net connections, src/transport/nvls.cc:210-211), and on aws-ofi-nccl's RDMA protocol a message
// above the eager size is written only into the buffer that control message named, so the first
// chunk up the tree arrives a slot round trip after the start, not the one hop NCCL's latency
// charges. Once per call: the hops after it (down the tree, up from deeper nodes) send into
// receives posted at the start, whose control messages are there by then. The message is the
// first chunk of a connection (channel x head): min(NVLS chunk, bytes / connections).
// Example, 2 p5 nodes, 64 MiB: 128 KiB chunks, + 83.5 - 23 = 60.5 us (487.6 -> 548.1 us, measured
// 598.9 - 607.9). The tree does not take it: its 2-node LL128 rows (1 - 16 MiB, within 25%
// without it) would move to +18..+36% (docs/fidelity.md, "the NVLS-tree's first message").
double nvls_tree_first_message_wait_us(const TopologyView& v, NcclAlgo algo, Protocol protocol,
                                       OpKind kind, double bytes, const NvlsSteps& nvls) {
  const double round_trip_us = network_terms(v.network).rdma_slot_round_trip_us;
  if (algo != NcclAlgo::nvls_tree || kind != OpKind::all_reduce || v.nodes < 2 || !(bytes > 0.0) ||
      !(round_trip_us > 0.0)) {
    return 0.0;
  }
  check_nvls_steps(nvls, "nvls_tree_first_message_wait_us");
  const double first_message = std::min(nvls.chunk_bytes, bytes / nvls.ops);
  if (!net_message_waits_for_control(v.network, wire_bytes(v, protocol, first_message))) return 0.0;
  const double charged_hop_us =
      nccl_latency_parts(v, algo, protocol, kind, bytes, false).net_hop_us;
  return std::max(0.0, round_trip_us - charged_hop_us);
}

bool net_message_waits_for_control(topo::NetworkClass network, double message_wire_bytes) {
  const NetworkTerms terms = network_terms(network);
  return terms.rdma_slot_round_trip_us > 0.0 && message_wire_bytes > terms.eager_max_bytes;
}

}  // namespace twinccl::sim::detail
