// The network messages of NCCL's grouped send/recv across nodes (p2p_net_messages.h).
//
// How it works. nccl-tests' alltoall is one group of a send and a receive per peer; NCCL plans
// each peer's send as parts on p2p channels, and the proxy moves each part as network messages
// of one chunk (read in NVIDIA/nccl v2.27.7-1; the same rules through v2.30.7-1, not copied):
// * the chunk: NCCL_P2P_NET_CHUNKSIZE (128 KiB) across nodes, at most NCCL_BUFFSIZE (4 MiB) / 8
//   (src/init.cc:620-642);
// * the channels and parts: p2p_channels.h, their one owner (p2pnChannels = twice the graph's
//   channels rounded up to a power of 2, 16 on p5; a network peer's 2 halved with scale, never
//   below the NICs the GPU drives by bandwidth; a send starts on that count halved while it x
//   nRanks > p2pnChannels, on no more parts than its bytes over half a chunk, doubling while a
//   part exceeds one chunk); a part is the send's share rounded up to 4 KiB
//   (src/include/device.h:253 ncclP2pPartBounds);
// * the messages: a send below one chunk goes in quarter chunks, below 8 chunks in half chunks
//   (src/enqueue.cc:845-846); a part is divUp(its bytes, that) messages (:986).
// Example: p5, 32 nodes (256 ranks), 32 MiB alltoall, the run's 512 KiB chunk: 128 KiB to each
// peer, one part, one 128 KiB message; 2 GiB: 8 MiB a peer, one part, 16 messages of 512 KiB.
// Each message completes once at the sender and once at the receiver, on the proxy thread of
// the GPU (one progress thread per GPU, src/proxy.cc:982; with PXN the rail's GPU posts it,
// the same count on average). aws-ofi-nccl puts an EFA completion at "~2 us in the device and
// ~1 us to write that completion up to the host stack" (v1.16.3 include/nccl_ofi_param.h:313-317,
// TUNER_NET_COMP_OVERHEAD 3): the 1 us host part is charged per completion, in series with the
// wire (the device part is the hop's latency, already in the class's 23 us Simple hop). NCCL's
// own IB/RoCE transport has no such public figure: 0 there. NCCL_NCHANNELS_PER_NET_PEER and
// NCCL_MAX_P2P_NCHANNELS are left at NCCL's defaults; the 2x chunk NCCL 2.30 gives ARM
// Blackwell hosts (init.cc v2.30.7-1:833) is not modelled (the view knows the host CPU,
// TopologyView::host_cpu, but this plan does not read it).
// The first message's wait (efap2p round; NVIDIA/nccl v2.27.7-1, read, not copied). NCCL's p2p
// net connections share one pool of NCCL_SHARED_STEPS = 16 buffers per channel and direction
// (src/transport/net.cc:527, :567-572) and one proxy queue per channel (:726, :887): the works of
// one batch (at most NCCL_MAX_DEV_WORK_P2P_PER_BATCH = 8, src/include/device.h:369,
// src/enqueue.cc:116) share an opCount and become one proxy op; the next batch waits behind it
// as its nextPeer until it is done (src/proxy.cc:423-455). A batch's receive proxy posts its
// receives when the batch starts (net.cc:1305-1367); on aws-ofi-nccl's RDMA protocol a message
// above the eager size is written only into the buffer the receiver's control message named
// (network_class.h), so a batch's first data arrives a round trip (control message there, data
// back) after the batch starts, not one hop: the class's slot round trip (83.5 us, FITTED on p5
// all_gather rows, on no alltoall row) per batch a channel runs in series, less the ONE network
// hop the call's latency holds in total (the caller's: sendrecv's, and flow's and alpha-beta's for
// the direct all_to_all alike, what_if_latency.h: the class's 23 us hop +
// network_hop_extra_us, network_class.h network_hop_us). Batches 2..N start behind batch
// 1's end, so each waits a whole round trip; only the first overlaps the charged hop. A round's
// channel is src/include/channel.h:19-28 (ncclP2pChannelBaseForRound: the node distance, with 8
// GPUs a node) and device.h:269-274 (ncclP2pChannelForPart: part p on base + reverseBits(p)).
// Example, 2 p5 nodes, 32 MiB: 8 remote rounds, 2 parts each, on channels 1 and 9 (NCCL's 16 p2p
// channels): one batch of 8 each, + 83.5 - 23 = 60.5 us (flow); 32 nodes: 31 node distances over
// 16 channels, 2 batches, + 2 x 83.5 - 23 = 144 us (with the 8 channels the model had before
// NCCL's doubling was read: 4 batches, 311 us).
#include "p2p_net_messages.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "network_class.h"
#include "twinccl/topologies/topology.h"

namespace twinccl::sim::detail {
namespace {

constexpr double kP2pPartAlignBytes = 4096;  // device.h:254 ncclP2pPartBounds

// NCCL_MAX_DEV_WORK_P2P_PER_BATCH (v2.27.7-1 src/include/device.h): p2p works a channel's batch
// holds.
constexpr int kP2pWorksPerBatch = 8;

// reverseBits(part, log2 channels) (device.h:269 ncclP2pChannelForPart).
int reverse_bits(int value, int bits) {
  int r = 0;
  for (int i = 0; i < bits; ++i) {
    if ((value >> i) & 1) r |= 1 << (bits - 1 - i);
  }
  return r;
}

double div_up(double a, double b) { return std::ceil(a / b); }

}  // namespace

P2pNetMessages::P2pNetMessages(const TopologyView& view) : plan_(nccl_p2p_plan(view)) {}

int P2pNetMessages::parts_of(double peer_bytes) const {
  return nccl_p2p_send_channels(plan_, peer_bytes);
}

double P2pNetMessages::message_bytes_of(double peer_bytes) const {
  return peer_bytes < plan_.chunk_bytes         ? plan_.chunk_bytes / 4
         : peer_bytes < 8.0 * plan_.chunk_bytes ? plan_.chunk_bytes / 2
                                                : plan_.chunk_bytes;
}

double P2pNetMessages::of_send(double peer_bytes) const {
  if (!(peer_bytes > 0.0) || !(plan_.chunk_bytes > 0.0))
    return peer_bytes == 0.0 ? 1.0 : 0.0;  // an empty send is one step
  const int parts = parts_of(peer_bytes);
  const double message_bytes = message_bytes_of(peer_bytes);
  const double part_bytes =
      div_up(div_up(peer_bytes, parts), kP2pPartAlignBytes) * kP2pPartAlignBytes;
  double messages = 0.0;
  for (int p = 0; p < parts; ++p) {
    const double begin = std::min(p * part_bytes, peer_bytes);
    const double end = std::min((p + 1) * part_bytes, peer_bytes);
    if (end > begin) messages += div_up(end - begin, message_bytes);
  }
  return messages;
}

namespace {

// Whether a batch's first message (a peer's bytes > 0, given the plan) waits for the
// receiver's control message: net_window.cc's one rule, on the first message's wire bytes (p2p
// runs Simple: its wire bytes are its data).
bool first_message_waits(const TopologyView& view, const P2pNetMessages& plan, double peer_bytes) {
  const double part_bytes = div_up(peer_bytes, plan.parts_of(peer_bytes));
  return net_message_waits_for_control(view.network,
                                       std::min(part_bytes, plan.message_bytes_of(peer_bytes)));
}

// `batches` batches in series on the busiest channel: a round trip each, less the hop charged.
double batches_wait_us(const NetworkTerms& terms, int batches, double charged_hop_us) {
  return std::max(0.0, batches * terms.rdma_slot_round_trip_us - charged_hop_us);
}

}  // namespace

double net_batch_first_slot_us(const TopologyView& view, const P2pNetMessages& plan,
                               double send_bytes, double charged_hop_us) {
  const NetworkTerms terms = network_terms(view.network);
  if (view.nodes < 2 || !(terms.rdma_slot_round_trip_us > 0.0) || !(send_bytes > 0.0)) return 0.0;
  if (!first_message_waits(view, plan, send_bytes)) return 0.0;
  return batches_wait_us(terms, 1, charged_hop_us);
}

namespace {

// The batches of 8 works the busiest channel runs in series when a rank exchanges `peer_bytes`
// (> 0) with every rank outside its node: which channel each network round's parts run on
// (channel.h ncclP2pChannelBaseForRound, device.h ncclP2pChannelForPart).
int busiest_channel_batches(const TopologyView& view, const P2pNetMessages& plan,
                            double peer_bytes) {
  const int local = std::max(1, view.ranks_per_node);
  const int parts = plan.parts_of(peer_bytes);
  const int channels = std::max(1, plan.p2p_channels());
  int bits = 0;
  while ((1 << bits) < channels) ++bits;
  std::vector<int> works(static_cast<std::size_t>(channels), 0);
  const int per_node_bases = (local + kP2pWorksPerBatch - 1) / kP2pWorksPerBatch;
  for (int round = local; round < view.nranks; ++round) {  // rounds 0..local-1 stay in the node
    const int base =
        ((round / local) * per_node_bases + (round % local) / kP2pWorksPerBatch) & 0xff;
    for (int p = 0; p < parts; ++p)
      ++works[static_cast<std::size_t>((base + reverse_bits(p, bits)) & (channels - 1))];
  }
  const int most = *std::max_element(works.begin(), works.end());
  return (most + kP2pWorksPerBatch - 1) / kP2pWorksPerBatch;
}

// What the call's busiest GPU does across nodes: its network messages (each one completion) and
// its largest remote peer's bytes; ranks sit node by node, `view.ranks_per_node` a node.
struct RemoteExchange {
  double messages = 0.0;
  double largest_bytes = 0.0;
  bool every_batch_waits = true;
};

// Which kinds and why (read in NVIDIA/nccl v2.27.7-1 and nccl-tests; the same argument as the
// all_to_all above, checked per kind):
// * all_to_all, all_to_all_v: every GPU sends to and receives from every remote peer, in the
//   rounds and batches above: a send and a receive completion per message; every batch waits
//   (a receiver posts a batch's receives when that batch starts). all_to_all_v's busiest GPU's
//   messages come from its matrix row and column; its wait is decided on the largest remote
//   peer's bytes (the batches of the others are not slower).
// * gather(_v): the root receives from every remote rank: a receive completion per message on
//   its proxy (each sender's proxy has its one send: fewer); its receives post batch by batch,
//   so every batch waits a round trip, as all_to_all's.
// * scatter(_v): the root sends to every remote rank: a send completion per message; each
//   receiver posts its one receive when the call starts, so its control message is there by the
//   time the root's later batches start: only the first batch waits.
// Every other kind (all_gather, reduce_scatter ... under the direct what-if schedule) is not run
// by NCCL as grouped send/recv: none.
std::optional<RemoteExchange> remote_exchange(const TopologyView& view, const P2pNetMessages& plan,
                                              const CollectiveSpec& spec, double element_bytes) {
  const int local = std::max(1, view.ranks_per_node);
  const int n = spec.nranks;
  const auto remote = [&](int a, int b) { return a / local != b / local; };
  RemoteExchange x;
  switch (spec.kind) {
    case OpKind::all_to_all:
      x.largest_bytes = static_cast<double>(spec.count) * element_bytes;
      x.messages = 2.0 * (view.nranks - local) * plan.of_send(x.largest_bytes);
      return x;
    case OpKind::all_to_all_v: {
      if (spec.matrix.size() != static_cast<std::size_t>(n) * static_cast<std::size_t>(n))
        return std::nullopt;
      const auto bytes = [&](int src, int dst) {
        return static_cast<double>(spec.matrix[static_cast<std::size_t>(src) * n + dst]) *
               element_bytes;
      };
      for (int r = 0; r < n; ++r) {
        double messages = 0.0;
        for (int peer = 0; peer < n; ++peer) {
          if (!remote(r, peer)) continue;
          messages += plan.of_send(bytes(r, peer)) + plan.of_send(bytes(peer, r));
          x.largest_bytes = std::max({x.largest_bytes, bytes(r, peer), bytes(peer, r)});
        }
        x.messages = std::max(x.messages, messages);
      }
      return x;
    }
    case OpKind::gather:
    case OpKind::scatter:
      x.largest_bytes = static_cast<double>(spec.count) * element_bytes;
      x.messages = (view.nranks - local) * plan.of_send(x.largest_bytes);
      x.every_batch_waits = spec.kind == OpKind::gather;
      return x;
    case OpKind::gather_v:
    case OpKind::scatter_v:
      if (spec.counts.size() != static_cast<std::size_t>(n)) return std::nullopt;
      for (int r = 0; r < n; ++r) {
        if (!remote(spec.root, r)) continue;
        const double b =
            static_cast<double>(spec.counts[static_cast<std::size_t>(r)]) * element_bytes;
        x.messages += plan.of_send(b);
        x.largest_bytes = std::max(x.largest_bytes, b);
      }
      x.every_batch_waits = spec.kind == OpKind::gather_v;
      return x;
    default:
      return std::nullopt;
  }
}

}  // namespace

double grouped_p2p_net_us(const TopologyView& view, const CollectiveSpec& spec, DataType dtype,
                          double charged_hop_us) {
  const NetworkTerms terms = network_terms(view.network);
  const int local = std::max(1, view.ranks_per_node);
  if (view.nodes < 2 || view.nranks <= local ||
      !(terms.completion_host_us > 0.0 || terms.rdma_slot_round_trip_us > 0.0))
    return 0.0;
  const P2pNetMessages plan(view);
  const auto x = remote_exchange(view, plan, spec, static_cast<double>(size_of(dtype)));
  if (!x || !(x->largest_bytes > 0.0)) return 0.0;
  double us = x->messages * terms.completion_host_us;
  if (terms.rdma_slot_round_trip_us > 0.0 && first_message_waits(view, plan, x->largest_bytes)) {
    const int batches =
        x->every_batch_waits ? busiest_channel_batches(view, plan, x->largest_bytes) : 1;
    us += batches_wait_us(terms, batches, charged_hop_us);
  }
  return us;
}

}  // namespace twinccl::sim::detail
