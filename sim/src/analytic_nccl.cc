// The NCCL-like analytic model: time = latency + bytes / bandwidth, every constant from kNccl.
//
// How it works (NCCL's graph/tuning.cc and enqueue.cc in words, nccl-facts.md):
//   busBw = channels x per-channel bandwidth (topology_view.cc: NVLink inside a node, one channel
//   per NIC at NCCL's inter speed across nodes), then per algorithm and protocol:
//     ring   LL: min(llMax, 0.5 busBw)  LL128: min(0.92 busBw, ch x 36.7)  Simple: busBw
//     tree   min(0.92 busBw, ch x cap), then LL: min(/3.8, llMax), LL128: x 7/9 (1 node) or
//            120/128, no more than ch x LL128 cap; x NCCL's tree correction factor by size;
//            as the call runs on Hopper/Blackwell, LL128 algbw no more than ch x 0.3 x the ring's
//            LL128 cap (the kernel's broadcast warps, tree_ll128_split_algbw_gbps);
//            on 2 nodes busBw at the tree graph's raised intra speed (search.cc pass 2: up to
//            2 x the NIC's while it fits the NVLink; aws-p4d-2 4 x 24 instead of 4 x 12)
//     nvls   one node; all_reduce as NCCL prices it (nvls_all_reduce_algbw_gbps): h = min(n, 32)
//            heads (NCCL_MAX_NVLS_ARITY), each head's channel at the fastest speed s of the
//            arch's list with (h+1) s within the NVLink (each GPU's NVLink carries h+1 slices of
//            S/h each way: multimem ld_reduce then st, nccl-tests issue 212), busBw = h s x 0.85
//            x (h-1)/h x 2, algbw = busBw n / (2(n-1)); reduce_scatter/all_gather algbw =
//            NVLink x 0.85 (S one way, S/n the other)
//     nvls_tree  per channel min(max(inter speed, NVLink / ch) x 0.85 x (ch-1)/ch x 2, inter
//            speed (x 2(n-1)/n on 2 nodes), NVLS-tree cap 57.7 (2 nodes) / 45.5): NCCL's
//            terms, with the NVLS stage on its NVLink share and the 2-node NIC bound exact;
//            all_reduce on Blackwell with x86 hosts x NCCL's correction by size
//            (nvls_tree_correction.cc; in the ranking from NCCL 2.29.2)
//     pat    0.75 busBw
//   algbw: ring busBw x n / steps (steps 2(n-1) all_reduce, n-1 reduce_scatter/all_gather, n
//   broadcast/reduce); nvls_tree busBw x n / (2(n-1)); tree all_reduce busBw / 2.
//   Small calls run on fewer channels (enqueue.cc): ring/tree drop channels while
//   bytes < channels x threads x threshold, and the bandwidth is that of the channels kept. NCCL
//   does this after choosing the algorithm (its tuner ranks by the time on all channels), so the
//   tuner ranks with Channels::all and reports the time with Channels::launched: on 8 A100s a
//   32 KiB all_reduce is ring/LL (as NCCL picks ring/LL up to 1 MB on 8 H100s, nccl-tests issue
//   309), not the tree/LL that one launched channel would make look faster.
//   latency: ring base + (steps - netSteps) x intraHop + netSteps x netHop, netSteps = 2(nodes-1)
//   for all_reduce, nodes-1 otherwise, intra hops no cheaper than NCCL's net overhead across
//   nodes, x1.4 for Simple all_reduce across nodes (the ring plateau); tree base +
//   2((ppn-1) intraHop + log2(nodes) netHop); nvls intraHop; nvls_tree intraHop +
//   2 log2(nodes) x NVLS-tree netHop; pat base + log2(nodes) netHop / 3.5 + 2.8 n.
//   One GPU per node: the tree's network hop latency, as NCCL. A network hop on EFA costs what
//   AWS's own tuner says (network_class.h: 20 us, 23 on Simple).
//   One rank: NCCL's one-rank path, a copy through device memory (model.h device_copy_algbw_gbps:
//   read and write at 0.9 x HBM); H200, 512 MiB: 2 x 537 MB / 4320 GB/s = 249 us (+5 us launch).
//   NVLS/NVLS-tree all_reduce also pay their pipeline's fill and, on Blackwell in one NVLink
//   domain, a synchronisation per step their smaller chunk adds (nvls_steps.cc).
//   bytes = nccl-tests' bytes (perf_math.h: nranks x count for reduce_scatter/all_gather), and
//   time_us = latency_us + bytes / (1000 x algbw_gbps), as NCCL's ncclTopoGetAlgoTime.
// Caps, LL limits and speed lists are the arch's row (caps_of: Ampere, Hopper, Blackwell; AMD
// MI300X takes Hopper's, nccl_tuning_table.h); Blackwell's NVLS efficiency is 0.74. On AMD GPUs
// the LL128 factors that stand for NVIDIA's 120/128 line take RCCL's 56/64 (ll128_line_ratio,
// analytic_rccl.cc).
// Not modelled: CollNet, NCCL's IB network latency (0 in NCCL's IB transport), the CPU vendor
// (net overhead taken as Intel's 1 us), PAT's restriction to one GPU per node (predict.cc),
// RCCL's multi-node tuning for AMD GPUs and MSCCL++ (RCCL in one node: analytic_rccl.cc).
#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

#include "model.h"
#include "network_class.h"
#include "twinccl/perf_math.h"

namespace twinccl::sim::detail {
namespace {

std::size_t node_index(int nodes) { return nodes <= 1 ? 0 : nodes == 2 ? 1 : 2; }

// The one place the model reads NCCL's CPU vendor (comm->cpuVendor): AMD on an AMD EPYC host.
// NCCL prices two terms by it, both below: a network post (getNetOverhead) and LL's cap across
// nodes (llMaxBws' host rows).
bool nccl_amd_host(const TopologyView& v) { return v.host_cpu == topo::HostCpu::x86_amd; }

// LL's bandwidth cap: in one node the GPU's row of llMaxBws, across nodes the host's (tuning.cc
// index1: "for multi-node, we look at CPU type"; v2.18.5-1 .. v2.30.7-1 alike): AMD x86 hosts
// 22.5 / 19.0 GB/s on 2 / more nodes, every other host 39.0 / 20.4.
double nccl_ll_max_gbps(const TopologyView& v) {
  const std::size_t ni = node_index(v.nodes);
  if (ni == 0) return caps_of(v.arch).ll_max_gbps[0];
  const auto& row = nccl_amd_host(v) ? kNccl.ll_max_gbps_amd_hosts : kNccl.ll_max_gbps_other_hosts;
  return row[ni - 1];
}

int ring_steps(OpKind kind, int n) {
  switch (kind) {
    case OpKind::all_reduce:
      return 2 * (n - 1);
    case OpKind::reduce_scatter:
    case OpKind::all_gather:
      return n - 1;
    default:
      return n;
  }
}

// Blackwell 0.74; Hopper's 0.85 for every other arch (NVLS runs on Hopper and Blackwell only).
double nvls_efficiency(const TopologyView& v) { return caps_of(v.arch).nvls_efficiency; }

// NVLS/NVLS-tree need 2 channels (tuning.cc); with one head NCCL prices no NVLS.
constexpr double kNvlsMinHeads = 2.0;

double tree_bus(const TopologyView& v, double ch, double bus, Protocol p) {
  const ArchCaps caps = caps_of(v);
  const std::size_t ni = node_index(v.nodes);
  const double ll_max = nccl_ll_max_gbps(v);
  const double cap = caps.tree_channel_gbps[ni];
  // On 2 nodes NCCL prices the tree at its graph's raised intra speed (up to 2 x the NIC's).
  bus *= nccl_tree_two_node_speed_factor(v);
  double tree = std::min(kNccl.tree_simple_factor * bus, ch * cap);
  if (p == Protocol::ll) tree = std::min(kNccl.tree_ll_factor * tree, ll_max);
  if (p == Protocol::ll128) {
    const double ll128_cap = caps.tree_ll128_channel_gbps[ni];
    tree = std::min(tree * (v.nodes == 1 ? kNccl.tree_ll128_factor_1node
                                         : kNccl.tree_ll128_factor_nodes * ll128_line_ratio(v)),
                    ch * ll128_cap);
  }
  return tree;
}

}  // namespace

ArchCaps caps_of(const TopologyView& v) {
  ArchCaps caps = caps_of(v.arch);
  const NcclVersionTerms& t = kNcclVersionTerms;
  if (v.arch == topo::GpuArch::blackwell && nccl_before(v, t.blackwell_tree_caps_since)) {
    caps.tree_channel_gbps = t.tree_channel_cap_blackwell_before_2_28_3;
    caps.tree_ll128_channel_gbps = t.tree_ll128_channel_cap_blackwell_before_2_28_3;
  }
  return caps;
}

double nvls_all_reduce_efficiency(const TopologyView& v, double local_ranks) {
  const double heads = nvls_heads(local_ranks);
  const double link = v.nccl_nvlink_gbps > 0.0 ? v.nccl_nvlink_gbps : v.intra_gbps;
  if (heads < kNvlsMinHeads || !(link > 0.0)) return 0.0;
  const std::span<const double> speeds(*caps_of(v.arch).speeds_intra);
  // A link slower than the list's last entry x (heads + 1): what it carries.
  double speed = link / (heads + 1.0);
  for (double s : speeds) {
    if ((heads + 1.0) * s <= link) {
      speed = s;
      break;
    }
  }
  const double bus = heads * speed * nvls_efficiency(v) * (heads - 1.0) / heads * 2.0;
  const double algbw = bus * local_ranks / (2.0 * (local_ranks - 1.0));
  return algbw / (link * heads / (heads + 1.0));
}

double nvls_all_reduce_algbw_gbps(const TopologyView& v, double local_ranks) {
  const double heads = nvls_heads(local_ranks);
  return v.intra_gbps * heads / (heads + 1.0) * nvls_all_reduce_efficiency(v, local_ranks);
}

ChannelPlan nccl_launched_channels(const TopologyView& v, ChannelPlan plan, NcclAlgo algo,
                                   Protocol p, double bytes) {
  if (algo != NcclAlgo::ring && algo != NcclAlgo::tree) return plan;
  if (rccl_bus_bandwidth(v, plan, algo, p)) return plan;  // RCCL's time keeps every channel
  const std::size_t pi = index_of(p);
  double threshold = kNccl.thread_threshold_bytes[pi];
  if (algo == NcclAlgo::ring && p == Protocol::ll) threshold *= v.nranks;
  const double per_channel = kNccl.max_threads[pi] * threshold;
  int nc = plan.channels;
  while (nc >= 2 && bytes < nc * per_channel) --nc;
  if (nc < plan.channels) {
    plan.bus_gbps *= static_cast<double>(nc) / plan.channels;
    plan.channels = nc;
  }
  return plan;
}

double nccl_bus_bandwidth(const TopologyView& v, const ChannelPlan& plan, NcclAlgo algo, Protocol p,
                          OpKind kind) {
  if (const auto rccl = rccl_bus_bandwidth(v, plan, algo, p)) return *rccl;
  const ArchCaps caps = caps_of(v.arch);
  const std::size_t ni = node_index(v.nodes);
  const double ll_max = nccl_ll_max_gbps(v);
  const double ch = plan.channels;
  const double bus = plan.bus_gbps;
  switch (algo) {
    case NcclAlgo::ring:
      if (p == Protocol::ll) return std::min(ll_max, kNccl.ring_ll_factor * bus);
      if (p == Protocol::ll128) {
        return std::min(kNccl.ring_ll128_factor * ll128_line_ratio(v) * bus,
                        ch * caps.ring_ll128_channel_gbps);
      }
      return bus;
    case NcclAlgo::tree:
      return tree_bus(v, ch, bus, p);
    case NcclAlgo::nvls:
      return kind == OpKind::all_reduce ? nvls_all_reduce_algbw_gbps(v, v.nranks)
                                        : v.intra_gbps * nvls_efficiency(v);
    case NcclAlgo::nvls_tree: {
      // NCCL prices the in-node NVLS stage at the search's per-channel speed, the NIC's; that
      // stage runs on NVLink, so each channel gets its share of it when that is more (Blackwell:
      // 721.8 / 8 = 90 GB/s, not 48; Hopper's 370.8 / 8 = 46 stays under its 48).
      const double speed = plan.per_channel_gbps;
      const double nvlink_share = ch > 0.0 ? v.intra_gbps / ch : speed;
      const double intra =
          std::max(speed, nvlink_share) * nvls_efficiency(v) * (ch > 1 ? (ch - 1) / ch : 1.0) * 2.0;
      // On 2 nodes each head's NIC carries its S/heads slice once each way, so the NICs bound
      // algbw at channels x speed: x 2(n-1)/n in busBw (NCCL's x 2 is n/(n-1) above it).
      const double n = v.nranks;
      const double inter = speed * (v.nodes <= 2 && n > 1 ? 2.0 * (n - 1.0) / n : 1.0);
      // The in-node stage moves through each GPU's NVLink what one node's NVLS all_reduce moves
      // (multimem ld_reduce to the heads, multimem st back), so it is no faster than that
      // all_reduce: its algbw, in NVLS-tree's busBw (x 2(n-1)/n). A rack of 64 Blackwell GPUs:
      // 466 GB/s, where 16 NIC channels' NVLink share gave 537.
      double stage = std::numeric_limits<double>::infinity();
      if (v.nodes > 1 && n > 1) {
        const double one_node = nvls_all_reduce_algbw_gbps(v, v.ranks_per_node);
        if (one_node > 0.0) stage = one_node * 2.0 * (n - 1.0) / n;
      }
      return std::min(ch * std::min({intra, inter, caps.nvls_tree_channel_gbps[ni]}), stage);
    }
    case NcclAlgo::pat:
      return kNccl.pat_factor * bus;
  }
  return bus;
}

LatencyParts nccl_latency_parts(const TopologyView& v, NcclAlgo algo, Protocol p, OpKind kind,
                                double bytes, bool ranking) {
  // RCCL's terms where it has its own: in one node all of them; across nodes its LL hops, whose
  // network hop then goes through the network class and the ring's overhead as NCCL's does.
  const auto rccl = rccl_latency_parts(v, algo, p);
  if (rccl && v.nodes == 1) return *rccl;
  const std::size_t pi = index_of(p);
  const auto hop = [&](LinkClass c, NcclAlgo a) {
    return at(kNccl.hop_latency_us[static_cast<std::size_t>(c)], a, pi);
  };
  LatencyParts l;
  l.base_us = rccl ? rccl->base_us : at(kNccl.base_latency_us, algo, pi);
  l.intra_hop_us = rccl ? rccl->intra_hop_us : hop(v.intra_class, algo);
  const double nccl_net_us =
      rccl ? rccl->net_hop_us
           : hop(LinkClass::network, v.ranks_per_node == 1 ? NcclAlgo::tree : algo);
  l.net_hop_us = ranking ? network_rank_hop_us(v.network, p, nccl_net_us, v.network_hop_extra_us)
                         : network_hop_us(v.network, p, nccl_net_us, v.network_hop_extra_us);
  if (algo == NcclAlgo::ring && v.nodes > 1) {
    // getNetOverhead: the host's vendor sets a network post's price (AMD x86 2 us, else 1 us).
    const double post_us = nccl_amd_host(v) ? kNccl.net_overhead_amd_us : kNccl.net_overhead_us;
    const double overhead =
        post_us * (p == Protocol::simple ? kNccl.net_overhead_simple_factor : 1.0);
    l.intra_hop_us = std::max(l.intra_hop_us, overhead);
    const int channels = nccl_channels(v, 0).channels;
    if (p == Protocol::simple && kind == OpKind::all_reduce &&
        bytes / (static_cast<double>(channels) * v.nranks) >= 64.0) {
      l.base_us *= kNccl.ring_plateau_factor;
      l.intra_hop_us *= kNccl.ring_plateau_factor;
      l.net_hop_us *= kNccl.ring_plateau_factor;
    }
  }
  return l;
}

double nccl_latency_us(const TopologyView& v, NcclAlgo algo, Protocol p, OpKind kind, double bytes,
                       bool ranking) {
  const LatencyParts l = nccl_latency_parts(v, algo, p, kind, bytes, ranking);
  const int n = v.nranks;
  const int log_nodes = nccl_log2i(v.nodes);
  switch (algo) {
    case NcclAlgo::ring: {
      const int steps = ring_steps(kind, n);
      const int net_steps =
          v.nodes > 1 ? (kind == OpKind::all_reduce ? 2 * (v.nodes - 1) : v.nodes - 1) : 0;
      return l.base_us + (steps - net_steps) * l.intra_hop_us + net_steps * l.net_hop_us;
    }
    case NcclAlgo::tree:
      return l.base_us + 2.0 * ((v.ranks_per_node - 1) * l.intra_hop_us + log_nodes * l.net_hop_us);
    case NcclAlgo::nvls:
      return l.intra_hop_us + (v.nodes > 1 ? l.net_hop_us : 0.0);
    case NcclAlgo::nvls_tree:
      return l.base_us + l.intra_hop_us + 2.0 * log_nodes * l.net_hop_us;
    case NcclAlgo::pat:
      return l.base_us + log_nodes * l.net_hop_us / 3.5 + 2.8 * n;
  }
  return l.base_us;
}

double nccl_algbw_gbps(const TopologyView& v, const ChannelPlan& plan, NcclAlgo algo, Protocol p,
                       OpKind kind, double bytes, bool call) {
  const double n = v.nranks;
  const double bus = call ? nccl_call_bus_gbps(v, plan, algo, p, kind)
                          : nccl_bus_bandwidth(v, plan, algo, p, kind);
  if (algo == NcclAlgo::ring && n > 1) return bus * n / ring_steps(kind, v.nranks);
  if (algo == NcclAlgo::nvls_tree && n > 1) {
    return nvls_tree_algbw_from_bus(bus, n) * nccl_nvls_tree_correction(v, kind, bytes, !call);
  }
  if (algo != NcclAlgo::tree) return bus;
  // NCCL ranks a tree from 3 nodes at busBw / 2 (tuning.cc ratio .5: every node moves 2 S); the
  // call moves what its double binary tree's busiest node carries (1.5 S on 3 nodes, where both
  // trees are chains). 2 nodes keep the raised 2-node price (tree_bus).
  const bool dtree = call && kind == OpKind::all_reduce && v.nodes >= 3;
  const double ratio = dtree ? 1.0 / nccl_dtree_busiest_node_load(v.nodes) : 0.5;
  return bus * ratio * nccl_tree_correction(v, p, kind, bytes);
}

double nccl_call_bus_gbps(const TopologyView& v, const ChannelPlan& plan, NcclAlgo algo, Protocol p,
                          OpKind kind) {
  double bus = nccl_bus_bandwidth(v, plan, algo, p, kind);
  // Across nodes the share of the NICs' rate the call moves (the topology's, else the network
  // class's: TCPX); NCCL ranks at the NIC's speed (network_class.h).
  if (v.nodes > 1) bus *= v.nic_delivered_share;
  // The tree/LL128 kernel's broadcast warps; NCCL's tree busBw is 2 x its algbw.
  if (algo == NcclAlgo::tree && p == Protocol::ll128 && kind == OpKind::all_reduce) {
    bus = std::min(bus, 2.0 * tree_ll128_split_algbw_gbps(v, plan));
  }
  return bus;
}

double tree_ll128_split_algbw_gbps(const TopologyView& v, const ChannelPlan& plan) {
  // Hopper and Blackwell only. NCCL's code does NOT restrict this: the split (v2.30.7-1
  // src/device/all_reduce.h:156-164) and the 640 LL128 threads (src/include/device.h:114,
  // src/graph/tuning.cc:255-257) are the same on every arch. The restriction is on the rate: a
  // warp's is read off NCCL's ring/LL128 cap, which the p5 ring/LL128 rows at 4-32 nodes run at
  // (within 6%; Blackwell taken on Hopper's evidence, no Blackwell tree/LL128 row judges it).
  // NCCL's Ampere cap, 20, is its Volta row copied (tuning.cc:186-187), and no bandwidth-bound
  // A100 ring/LL128 row checks it. The general form (Ampere too) was measured: every per-class
  // count unchanged, the p4de 2-node rows 256 KiB / 1 / 8 MiB closer (-9.2 / -18.9 / -12.2% ->
  // -5.7 / -8.8 / -11.5%, sizes where the EFA middle-size residual dominates), but the one
  // bandwidth-bound row, 64 MiB, -19.6% -> +28.8%: it runs at 25.4 GB/s algbw, above the
  // 4 x 0.3 x 20 = 24 the cap allows on the model's 4 channels. So the restriction is not
  // NCCL's, and the general form is worse where the cap binds: not adopted (docs/fidelity.md,
  // "Three restrictions audited"). AMD runs RCCL's kernel, not read here.
  const bool validated = v.arch == topo::GpuArch::hopper || v.arch == topo::GpuArch::blackwell;
  if (!validated) return std::numeric_limits<double>::infinity();
  // runTreeSplit (v2.27.7-1 src/device/all_reduce.h:157-165): of a channel's LL128 threads, whole
  // warps making 70% reduce, the rest broadcast; every byte passes both halves.
  constexpr double kWarp = 32.0;
  const double threads = kNccl.max_threads[index_of(Protocol::ll128)];
  const double reduce_threads = std::floor(threads * 7.0 / (10.0 * kWarp)) * kWarp;
  const double broadcast_share = (threads - reduce_threads) / threads;
  return plan.channels * broadcast_share * caps_of(v).ring_ll128_channel_gbps;
}

double nccl_tree_correction(const TopologyView& v, Protocol p, OpKind kind, double bytes) {
  if (kind != OpKind::all_reduce) return 1.0;
  if (const auto rccl = rccl_tree_correction(v, p, bytes)) return *rccl;
  const int log_size = bytes >= 64.0 ? nccl_log2i(bytes / 64.0) : -1;
  if (log_size < 0 || log_size >= 23) return 1.0;
  return kNccl.tree_correction[index_of(p)][static_cast<std::size_t>(log_size)];
}

Prediction analytic_nccl(const TopologyView& v, const Resolved& r, NcclAlgo algo,
                         Channels channels) {
  const int n = v.nranks;
  const OpKind kind = r.spec.kind;
  const double bytes = algbw_bytes(kind, r.spec.count, r.dtype, n);
  const ChannelPlan all = nccl_channels(v, r.params.channels);
  const ChannelPlan plan =
      channels == Channels::all ? all : nccl_launched_channels(v, all, algo, r.protocol, bytes);
  if (channels == Channels::all) {  // the ranking of the log's NCCL version, where it differs
    const bool latency = r.software_latency && n > 1;
    if (const auto rank_us =
            nccl_version_rank_us(v, plan, algo, r.protocol, kind, bytes, latency)) {
      Prediction ranked;
      ranked.channels = plan.channels;
      ranked.model = "nccl";
      ranked.time_us = *rank_us;
      return ranked;
    }
  }
  // One rank: a local copy through device memory (device_copy_algbw_gbps), whatever the
  // algorithm; the GPU's link rate only when its memory bandwidth is unknown.
  const bool local_copy = n == 1 && device_copy_algbw_gbps(v) > 0.0;
  const double algbw = local_copy ? device_copy_algbw_gbps(v)
                                  : nccl_algbw_gbps(v, plan, algo, r.protocol, kind, bytes,
                                                    channels == Channels::launched);
  Prediction p;
  p.channels = plan.channels;
  p.model = "nccl";
  // NCCL ranks (Channels::all) with the net plugin's latency; the call takes the hop's own.
  double latency = r.software_latency && n > 1 ? nccl_latency_us(v, algo, r.protocol, kind, bytes,
                                                                 channels == Channels::all)
                                               : 0.0;
  // The NVLS pipeline's fill, which NCCL's ranking leaves out: in the time of the call, never in
  // the time the tuner ranks by (Channels::all), so it never changes NCCL's choice.
  // Before 2.20.3 one node's NVLS call is as slow as its busiest channel (nvls_grid_stride.cc).
  const double timed_bytes =
      channels == Channels::launched ? nvls_busiest_channel_bytes(v, algo, kind, bytes) : bytes;
  if (r.software_latency && channels == Channels::launched && n > 1) {
    latency += pipeline_fills_us(v, algo, r.protocol, kind, timed_bytes, r.params.channels);
  }
  // A lone GPU with neither a memory bandwidth (arch unknown) nor a link (torus-1x1, a one-GPU
  // file) has no rate: nothing leaves it, as the flow model says (0), never bytes / 0 = inf.
  const bool lone_without_links = n == 1 && !(algbw > 0.0);
  p.time_us = latency + (bytes > 0.0 && !lone_without_links ? timed_bytes / (1000.0 * algbw) : 0.0);
  return p;
}

}  // namespace twinccl::sim::detail
