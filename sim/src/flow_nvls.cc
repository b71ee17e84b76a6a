// NVLS and NVLS-tree as flows: the NVSwitch reduces and multicasts, so its reduction costs no
// traffic of its own; what NCCL's NVLS moves crosses each GPU's NVLink once each way.
//
// How it works, S = nccl-tests' bytes, n ranks on one NVSwitch (4 ranks, all_reduce):
//   gpu0 --S(n+1)/n--> nvswitch --S(n+1)/n--> gpu0      (likewise gpu1..gpu3, all at once)
//   all_reduce: multimem ld_reduce (each GPU's input is read once: S up, its reduced slice S/n
//   down) then multimem st (S/n up, multicast: S down) = S(n+1)/n each way (n = the heads, at
//   most 32: NCCL_MAX_NVLS_ARITY; 72 GPUs share 32 heads' slices); reduce_scatter S up,
//   S/n down; all_gather S/n up, S down. Every flow carries 1/efficiency wire bytes per byte
//   (NCCL's NVLS efficiency, 0.85 on Hopper; for NVLS all_reduce the share NCCL's NVLS graph
//   prices, model.h nvls_all_reduce_efficiency), so flow's time is analytic's exactly on an
//   uncontended switch. NVLS-tree (whole nodes, ppn GPUs each): the in-node NVLS flows of an
//   all_reduce plus, per GPU, one flow to the GPU of the same local index in the next node (its
//   rail), for the GPUs of NCCL's channels (one per NIC, at most 16), carrying its slice
//   S/channels as NCCL's bus bandwidth counts it (x 2(n-1)/n) at the share
//   of the NIC that the per-channel NVLS-tree figure gives (its inter speed, x 2(n-1)/n on 2
//   nodes, capped at 57.7 / 45.5 GB/s): wire bytes x speed / per-channel figure. All flows start at
//   once (NCCL pipelines the phases): each rank has one step holding its flows, as their sender.
#include <algorithm>

#include "flow_build.h"
#include "model.h"
#include "twinccl/perf_math.h"

namespace twinccl::sim::detail {

bool program_for_nvls(const topo::Topology& topology, const TopologyView& view, const Resolved& r,
                      NcclAlgo algo, std::span<const int> gpus, RouteTable& routes,
                      FlowProgram& program) {
  const int n = r.spec.nranks;
  if (n < 2 || r.spec.count == 0) return false;
  // Before NCCL 2.20.3 one node's call moves as its busiest channel's share (nvls_grid_stride.cc).
  const double s = nvls_busiest_channel_bytes(view, algo, r.spec.kind,
                                              algbw_bytes(r.spec.kind, r.spec.count, r.dtype, n));
  const int local_ranks = algo == NcclAlgo::nvls_tree ? view.ranks_per_node : n;
  if (local_ranks < 1 || n % local_ranks != 0) return false;
  // NVLS all_reduce: the NVLink share NCCL's NVLS graph prices (nvls_all_reduce_efficiency: 0.66
  // on 72 GPUs of an NVL72 rack, not 0.74), so flow stays analytic's; NVLS-tree's in-node flows
  // keep NCCL's nvlsEfficiency, as analytic's NVLS-tree term.
  const double efficiency = algo == NcclAlgo::nvls && r.spec.kind == OpKind::all_reduce
                                ? nvls_all_reduce_efficiency(view, local_ranks)
                                : caps_of(topology.summary().arch).nvls_efficiency;
  if (!(efficiency > 0.0)) return false;
  // NVLS-tree all_reduce on Blackwell x86: NCCL's correction by size slows every flow alike, as
  // analytic's algbw (nvls_tree_correction.cc).
  const double correction =
      algo == NcclAlgo::nvls_tree ? nccl_nvls_tree_correction(view, r.spec.kind, s, false) : 1.0;
  const double heads = nvls_heads(local_ranks);  // at most NCCL_MAX_NVLS_ARITY (32)
  double up = s * (heads + 1.0) / heads;
  double down = up;
  if (r.spec.kind == OpKind::reduce_scatter) down = s / n;
  if (r.spec.kind == OpKind::reduce_scatter) up = s;
  if (r.spec.kind == OpKind::all_gather) up = s / n;
  if (r.spec.kind == OpKind::all_gather) down = s;
  struct Flow {
    int route;
    double bytes;
    int rank;
  };
  std::vector<Flow> flows;
  for (int rank = 0; rank < n; ++rank) {
    const int gpu = gpus[static_cast<std::size_t>(rank)];
    const int to_switch = routes.switch_route(gpu, true);
    const int from_switch = routes.switch_route(gpu, false);
    if (to_switch < 0 || from_switch < 0) return false;
    flows.push_back({to_switch, up / efficiency / correction, rank});
    flows.push_back({from_switch, down / efficiency / correction, rank});
  }
  if (algo == NcclAlgo::nvls_tree) {
    if (view.nodes < 2 || view.nic_gbps <= 0.0) return false;
    const ChannelPlan plan = nccl_channels(view, r.params.channels);
    // The rate the call runs at (nccl_call_bus_gbps: the NICs' delivered share, as analytic's).
    const double per_channel =
        nccl_call_bus_gbps(view, plan, algo, Protocol::simple, r.spec.kind) / plan.channels;
    // per_channel already counts a NIC 2(n-1)/n times on 2 nodes (both directions serve it).
    // NCCL's channels (one per NIC, at most 16) carry the network part: the GPUs of the first
    // `channels` local indices, S / channels each (every GPU on 8-GPU nodes; 16 of a GB200 NVL72
    // rack's 72, whose flows over 72 NICs made flow 9% faster than analytic on 8 racks).
    // A flow crosses its NIC at NCCL's speed for that NIC (network_efficiency); the channel's
    // price may be lower (fewer GB/s a channel where the NVLink bounds NCCL's ring search).
    const int channels = std::min(plan.channels, local_ranks);
    const double nic_speed = network_efficiency(view) * view.nic_gbps;
    const double bytes = s / channels * 2.0 * (n - 1.0) / n * nic_speed / per_channel / correction;
    for (int rank = 0; rank < n; ++rank) {
      if (rank % local_ranks >= channels) continue;
      const int peer = (rank + local_ranks) % n;
      flows.push_back({routes.route_id(gpus[static_cast<std::size_t>(rank)],
                                       gpus[static_cast<std::size_t>(peer)]),
                       bytes, rank});
    }
  }
  program.rank_steps.assign(static_cast<std::size_t>(n), {{}});
  for (const Flow& f : flows) {
    program.rank_steps[static_cast<std::size_t>(f.rank)].front().push_back(
        static_cast<int>(program.transfers.size()));
    program.transfers.push_back({.route = f.route,
                                 .bytes = f.bytes,
                                 .delay_s = 0.0,
                                 .step = 0,
                                 .src_rank = f.rank,
                                 .dst_rank = f.rank});
  }
  return true;
}

}  // namespace twinccl::sim::detail
