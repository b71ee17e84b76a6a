// The ranking of an older NCCL, where its tuning model differs from the newest (kNccl).
//
// How it works. NCCL's tuner ranks (algorithm, protocol) pairs by latency + bytes / bandwidth from
// the constants of its own version (graph/tuning.cc ncclTopoTuneModel, ncclTopoGetAlgoTime). A
// log says which NCCL ran it ("NCCL version 2.26.2"); the tuner ranks with that version's terms
// and the chosen call is then timed by the newest model (the kernels are the same; NCCL's newer
// constants are its better estimate of them). One difference matters on Hopper across nodes,
// NVLS-tree all_reduce (kNcclVersionTerms, nccl_tuning_table.h):
//   before 2.28.0 (v2.26.2-1 tuning.cc:252, :293): per channel min(bwIntra, bwInter on 2 nodes,
//     bwInter / 2 from 3 nodes), busBw = channels x that, algbw = busBw x 5/6; the NVLS graph has
//     one channel per head (a GPU with its NIC, search.cc:625) and bwIntra is the highest inter
//     list speed whose heads + 1 shares fit a GPU's NVLink (each GPU sends and receives bwIntra
//     per channel, twice on its own: search.cc:386 ncclTopoSearchTryNvls; H100: 9 x 40 <= 370.8),
//     bwInter the NIC's (search.cc:1112 raises it up to 2 bwIntra). H100, 8 NICs, 4 nodes:
//     8 x min(40, 48 / 2) x 5/6 = 160 GB/s (the newest model: 188);
//   before 2.28.9 (v2.28.7-1 tuning.cc): the NVLS-tree network hop is 14 us (then 20.9);
//   Blackwell from 3 nodes before 2.30.3: the per-channel cap is 43.1 (2.28.3 - 2.28.7) or 43.8
//   GB/s (2.28.9 - 2.29.7), 80 since. The NIC speed of 8 x 400G (48 a channel) then ranks below
//   ring's (ring 2 x 8 channels x 48, NVLS-tree 8 heads x 43.8 x 2: 16 GiB on 4 B200 nodes
//   ring/Simple first, as the use3a-ss run of 2.29.7 did at 4 - 46 nodes, ib-multinode.csv); with
//   80 NVLS-tree ranks first (2.30). Blackwell's ring/LL128 before 2.29.7: its per-channel cap of
//   that version (73.4 GB/s to 2.28.3, 34.5 - 34.6 in 2.29.2 - 2.29.3; 40 since), so a 2.25 tray
//   of 4 GB200s ranks LL128 first at 16 MiB where the newest model ranks Simple.
//   Latency: intra hop 25 + 2 log2(nodes) x net hop, as the newest model. 4 nodes: 25 + 4 x 14 =
//   81 us (newest 108.6). So NCCL 2.26 ranks NVLS-tree first on 4 nodes from 2 MiB (94.1 us
//   against tree/LL128's 95.6), where the newest model keeps tree/LL128 up to 8 MiB.
#include <algorithm>
#include <cmath>
#include <optional>
#include <span>

#include "model.h"
#include "network_class.h"

namespace twinccl::sim::detail {
namespace {

// Pre-2.28 NVLS-tree busBw (GB/s) and its algbw ratio: NCCL's NVLS graph search and tuning.cc.
double legacy_nvls_tree_algbw(const TopologyView& v, const ChannelPlan& plan) {
  const double heads = nccl_nvls_heads(v);  // across nodes: one per NIC
  const std::span<const double> speeds(*caps_of(v.arch).speeds_inter);
  double intra = speeds.back();
  for (double s : speeds) {
    if ((heads + 1.0) * s <= v.intra_gbps + 1e-9) {
      intra = s;
      break;
    }
  }
  const double inter = std::min(plan.per_channel_gbps, 2.0 * intra);
  const double per_channel = std::min(intra, v.nodes <= 2 ? inter : inter / 2.0);
  return heads * per_channel * kNcclVersionTerms.nvls_tree_algbw_per_busbw_before_2_28;
}

// This version's NVLS-tree per-channel cap where it is not the newest's: Blackwell from 3 nodes
// (NCCL's N4 column), 2.28.0 - 2.30.2 (before 2.28 the legacy formula has no cap).
std::optional<double> blackwell_nvls_tree_cap_gbps(const TopologyView& v) {
  const NcclVersionTerms& t = kNcclVersionTerms;
  const int version = v.nccl_version;
  if (v.arch != topo::GpuArch::blackwell || v.nodes <= 2 || version < t.nvls_tree_formula_since ||
      version >= t.blackwell_nvls_tree_cap_since) {
    return std::nullopt;
  }
  return version < t.nvls_tree_net_hop_since
             ? t.nvls_tree_channel_cap_blackwell_3nodes_before_2_28_9
             : t.nvls_tree_channel_cap_blackwell_3nodes_before_2_30_3;
}

}  // namespace

// Blackwell's ring/LL128 ranking before 2.29.7: NCCL's per-channel cap of that version.
std::optional<double> blackwell_ring_ll128_rank_us(const TopologyView& v, const ChannelPlan& plan,
                                                   OpKind kind, double bytes,
                                                   bool software_latency) {
  const NcclVersionTerms& t = kNcclVersionTerms;
  const int version = v.nccl_version;
  if (version == 0 || version >= t.blackwell_ring_ll128_cap_since ||
      v.arch != topo::GpuArch::blackwell || v.nranks < 2) {
    return std::nullopt;
  }
  const std::size_t ni = v.nodes <= 1 ? 0 : (v.nodes == 2 ? 1 : 2);
  const double cap = version < t.blackwell_ring_ll128_cap_2_28_7_since
                         ? t.ring_ll128_channel_cap_blackwell_before_2_28_7[ni]
                     : version < t.blackwell_ring_ll128_cap_2_29_since
                         ? t.ring_ll128_channel_cap_blackwell_before_2_29[ni]
                         : t.ring_ll128_channel_cap_blackwell_before_2_29_7[ni];
  const double newest_bus = nccl_bus_bandwidth(v, plan, NcclAlgo::ring, Protocol::ll128, kind);
  const double line_bus = kNccl.ring_ll128_factor * ll128_line_ratio(v) * plan.bus_gbps;
  const double bus = std::min(line_bus, plan.channels * cap);
  const double newest_algbw =
      nccl_algbw_gbps(v, plan, NcclAlgo::ring, Protocol::ll128, kind, bytes, false);
  if (!(newest_bus > 0.0) || !(newest_algbw > 0.0)) return std::nullopt;
  const double algbw = newest_algbw * bus / newest_bus;  // ring: algbw = busBw x n / steps
  const double latency =
      software_latency ? nccl_latency_us(v, NcclAlgo::ring, Protocol::ll128, kind, bytes, true)
                       : 0.0;
  return latency + (bytes > 0.0 ? bytes / (1000.0 * algbw) : 0.0);
}

std::optional<double> nccl_version_rank_us(const TopologyView& v, const ChannelPlan& plan,
                                           NcclAlgo algo, Protocol protocol, OpKind kind,
                                           double bytes, bool software_latency) {
  const int version = v.nccl_version;
  const NcclVersionTerms& t = kNcclVersionTerms;
  if (algo == NcclAlgo::ring && protocol == Protocol::ll128) {
    return blackwell_ring_ll128_rank_us(v, plan, kind, bytes, software_latency);
  }
  if (version == 0 || algo != NcclAlgo::nvls_tree || kind != OpKind::all_reduce || v.nodes < 2 ||
      v.nranks < 2) {
    return std::nullopt;
  }
  const std::optional<double> cap = blackwell_nvls_tree_cap_gbps(v);
  if (version >= t.nvls_tree_net_hop_since && !cap) return std::nullopt;
  double algbw = 0.0;
  if (version < t.nvls_tree_formula_since) {
    algbw = legacy_nvls_tree_algbw(v, nccl_channels(v, 0));
  } else {
    // NCCL's algbw as it ranks (busBw x n / 2(n-1), with its Blackwell x86 correction from
    // 2.29.2: nccl_nvls_tree_correction); the busBw under this version's cap where it binds
    // (the newest busBw is min(channels x min(intra, inter, cap), stage), so a lower cap is one
    // more term of that min).
    double bus = nccl_bus_bandwidth(v, plan, algo, Protocol::simple, kind);
    if (cap) bus = std::min(bus, plan.channels * *cap);
    algbw =
        nvls_tree_algbw_from_bus(bus, v.nranks) * nccl_nvls_tree_correction(v, kind, bytes, true);
  }
  double latency = 0.0;
  if (software_latency) {
    const LatencyParts l = nccl_latency_parts(v, algo, Protocol::simple, kind, bytes, true);
    const bool old_hop = version < t.nvls_tree_net_hop_since && v.ranks_per_node > 1;
    latency = l.base_us + l.intra_hop_us +
              2.0 * nccl_log2i(v.nodes) *
                  (old_hop ? network_rank_hop_us(v.network, Protocol::simple,
                                                 t.nvls_tree_net_hop_us_before_2_28_9,
                                                 v.network_hop_extra_us)
                           : l.net_hop_us);
  }
  return latency + (bytes > 0.0 && algbw > 0.0 ? bytes / (1000.0 * algbw) : 0.0);
}

}  // namespace twinccl::sim::detail
