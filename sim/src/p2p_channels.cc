// NCCL's channels for one send/recv in one node (p2p_channels.h says how and where it was read).
#include "p2p_channels.h"

#include <algorithm>
#include <cmath>

#include "nccl_tuning_table.h"

namespace twinccl::sim::detail {
namespace {

int pow2_up(int v) {
  int p = 1;
  while (p < v) p *= 2;
  return p;
}

}  // namespace

std::optional<P2pChannels> nccl_p2p_channels(const TopologyView& view, int nvlinks_per_gpu,
                                             double bytes) {
  if (view.nodes != 1 || view.nranks < 2 || topo::is_amd(view.arch) || !(bytes > 0.0)) {
    return std::nullopt;
  }
  const NcclVersionTerms& v = kNcclVersionTerms;
  const auto since = [&](int code) { return view.nccl_version == 0 || view.nccl_version >= code; };
  const ChannelPlan plan = nccl_channels(view, 0);
  const int max_channels =
      since(v.max_channels_64_since) ? kNccl.max_channels : v.max_channels_before_2_25;
  const int p2p = pow2_up(std::min(max_channels, 2 * plan.channels));
  const bool nvlink = view.intra_class == LinkClass::nvlink && nvlinks_per_gpu > 0;
  const int per_peer =
      std::min(pow2_up(nvlink ? kNccl.p2p_channels_per_nvlink * nvlinks_per_gpu : 2), p2p);
  int fewest = per_peer;
  while (fewest * view.nranks > p2p && fewest > 1) fewest /= 2;
  int most = per_peer;
  if (!since(v.p2p_channels_uncapped_since)) {
    while (most * view.nranks > 4 * p2p && most > 1) most /= 2;
  }
  const double chunk = nvlink ? kNccl.p2p_nvl_chunk_bytes : kNccl.p2p_pci_chunk_bytes;
  const double min_part = chunk * kNccl.p2p_min_part_per_chunk;
  const double max_part = chunk * kNccl.p2p_max_part_per_chunk;
  int channels = fewest;
  if (since(v.p2p_channels_by_parts_since)) {
    channels =
        static_cast<int>(std::clamp(std::ceil(bytes / min_part), 1.0, static_cast<double>(fewest)));
  }
  double part = std::max(min_part, bytes / channels);
  while (part > max_part && channels <= most / 2) {
    channels *= 2;
    part = bytes / channels;
  }
  return P2pChannels{channels, channels * plan.per_channel_gbps};
}

}  // namespace twinccl::sim::detail
