// The NCCL-like analytic model: time = latency + bytes / bandwidth, every constant from kNccl.
//
// How it works (NCCL's graph/tuning.cc in words, nccl-facts.md):
//   busBw = channels x per-channel bandwidth (topology_view.cc), then per algorithm and protocol:
//     ring   LL: min(llMax, 0.5 busBw)  LL128: min(0.92 busBw, ch x 36.7)  Simple: busBw
//     tree   Simple: min(0.92 busBw, ch x cap)  LL: min(busBw / 3.8, llMax)  LL128: min(f busBw, ch x cap)
//     nvls   one GPU's NVLink x 0.85 x (ch-1)/ch (one node only, as NCCL)
//     nvls_tree  the same, no more than 0.92 busBw nor ch x NVLS-tree cap (57.7 2 nodes, 45.5 more)
//     pat    0.75 busBw
//   algbw: ring busBw x n / steps (steps 2(n-1) all_reduce, n-1 reduce_scatter/all_gather, n
//   broadcast/reduce); tree all_reduce busBw / 2; nvls/pat busBw (NCCL converts no further).
//   latency: ring base + (steps - netSteps) x intraHop + netSteps x netHop, netSteps = 2(nodes-1)
//   for all_reduce, nodes-1 otherwise; tree base + 2((ppn-1) intraHop + log2(nodes) netHop);
//   nvls base + intraHop; nvls_tree base + intraHop + 2 log2(nodes) x NVLS-tree netHop (20.9 us);
//   pat base + log2(n) hops.
//   bytes = nccl-tests' bytes (perf_math.h: nranks x count for reduce_scatter/all_gather), and
//   time_us = latency_us + bytes / (1000 x algbw_gbps), as NCCL's ncclTopoGetAlgoTime.
// Not modelled: NCCL's tree correction factors and the ring "plateau" multiplier, CollNet,
// PAT's restriction to one GPU per node (we allow PAT everywhere, docs/simulator.md).
#include <algorithm>
#include <cmath>

#include "model.h"
#include "twinccl/perf_math.h"

namespace twinccl::sim::detail {
namespace {

int log2_ceil(int n) {
  int levels = 0;
  while ((1 << levels) < n) ++levels;
  return levels;
}

std::size_t node_index(int nodes) { return nodes <= 1 ? 0 : nodes == 2 ? 1 : 2; }

int ring_steps(OpKind kind, int n) {
  switch (kind) {
    case OpKind::all_reduce: return 2 * (n - 1);
    case OpKind::reduce_scatter:
    case OpKind::all_gather: return n - 1;
    default: return n;
  }
}

double bus_bandwidth(const TopologyView& v, const ChannelPlan& plan, NcclAlgo algo, Protocol p) {
  const bool ampere = v.arch == topo::GpuArch::ampere;
  const std::size_t ni = node_index(v.nodes);
  const double ll_max = ampere ? kNccl.ll_max_gbps_ampere[ni] : kNccl.ll_max_gbps_hopper[ni];
  const double ch = plan.channels;
  const double bus = plan.bus_gbps;
  const double tree_cap = ch * (ampere ? kNccl.tree_channel_cap_ampere[ni]
                                       : kNccl.tree_channel_cap_hopper[ni]);
  switch (algo) {
    case NcclAlgo::ring:
      if (p == Protocol::ll) return std::min(ll_max, kNccl.ring_ll_factor * bus);
      if (p == Protocol::ll128) {
        return std::min(kNccl.ring_ll128_factor * bus,
                        ch * (ampere ? kNccl.ring_ll128_channel_cap_ampere
                                     : kNccl.ring_ll128_channel_cap_hopper));
      }
      return bus;
    case NcclAlgo::tree:
      if (p == Protocol::ll) return std::min(kNccl.tree_ll_factor * bus, ll_max);
      if (p == Protocol::ll128) {
        return std::min(bus * (v.nodes == 1 ? kNccl.tree_ll128_factor_1node
                                            : kNccl.tree_ll128_factor_nodes),
                        tree_cap);
      }
      return std::min(kNccl.tree_simple_factor * bus, tree_cap);
    case NcclAlgo::nvls:
    case NcclAlgo::nvls_tree: {
      const double efficiency = v.arch == topo::GpuArch::blackwell
                                    ? kNccl.nvls_efficiency_blackwell
                                    : kNccl.nvls_efficiency_hopper;
      double nvls = v.intra_gbps * efficiency * (ch > 1 ? (ch - 1) / ch : 1.0);
      if (v.nodes > 1) {
        nvls = std::min({nvls, kNccl.tree_simple_factor * bus,
                         ch * kNccl.nvls_tree_channel_cap_hopper[ni]});
      }
      return nvls;
    }
    case NcclAlgo::pat: return kNccl.pat_factor * bus;
  }
  return bus;
}

double latency_us(const TopologyView& v, NcclAlgo algo, Protocol p, OpKind kind) {
  const std::size_t pi = index_of(p);
  const double base = at(kNccl.base_latency_us, algo, pi);
  const double intra = at(kNccl.hop_latency_us[static_cast<std::size_t>(v.intra_class)], algo, pi);
  const auto net = [&](NcclAlgo a) {
    return at(kNccl.hop_latency_us[static_cast<std::size_t>(LinkClass::network)], a, pi);
  };
  const int n = v.nranks;
  switch (algo) {
    case NcclAlgo::ring: {
      const int steps = ring_steps(kind, n);
      const int net_steps =
          v.nodes > 1 ? (kind == OpKind::all_reduce ? 2 * (v.nodes - 1) : v.nodes - 1) : 0;
      return base + (steps - net_steps) * intra + net_steps * net(algo);
    }
    case NcclAlgo::tree:
      return base + 2.0 * ((v.ranks_per_node - 1) * intra + log2_ceil(v.nodes) * net(algo));
    case NcclAlgo::nvls:
    case NcclAlgo::nvls_tree:
      return base + intra + (v.nodes > 1 ? 2.0 * log2_ceil(v.nodes) * net(NcclAlgo::nvls_tree) : 0.0);
    case NcclAlgo::pat:
      return base + log2_ceil(n) * (v.nodes > 1 ? net(algo) : intra);
  }
  return base;
}

}  // namespace

double nccl_latency_us(const TopologyView& view, NcclAlgo algo, Protocol protocol, OpKind kind) {
  return latency_us(view, algo, protocol, kind);
}

std::optional<NcclAlgo> nccl_algo_for(std::string_view algorithm, OpKind kind) {
  const bool rs_ag = kind == OpKind::reduce_scatter || kind == OpKind::all_gather;
  if (algorithm == "ring" && (kind == OpKind::all_reduce || rs_ag || kind == OpKind::broadcast ||
                              kind == OpKind::reduce)) {
    return NcclAlgo::ring;
  }
  if (algorithm == "tree" && kind == OpKind::all_reduce) return NcclAlgo::tree;
  if (algorithm == "nvls" && (kind == OpKind::all_reduce || rs_ag)) return NcclAlgo::nvls;
  if (algorithm == kNvlsTree && kind == OpKind::all_reduce) return NcclAlgo::nvls_tree;
  if (algorithm == "pat" && rs_ag) return NcclAlgo::pat;
  return std::nullopt;
}

Prediction analytic_nccl(const TopologyView& v, const Resolved& r, NcclAlgo algo) {
  const ChannelPlan plan = nccl_channels(v, r.params.channels);
  const int n = v.nranks;
  const OpKind kind = r.spec.kind;
  double algbw = bus_bandwidth(v, plan, algo, r.protocol);
  if (algo == NcclAlgo::ring && n > 1) {
    algbw *= static_cast<double>(n) / ring_steps(kind, n);
  } else if (algo == NcclAlgo::tree) {
    algbw *= 0.5;
  }
  const double bytes = algbw_bytes(kind, r.spec.count, r.dtype, n);
  Prediction p;
  p.channels = plan.channels;
  p.model = "nccl";
  const double latency = r.software_latency && n > 1 ? latency_us(v, algo, r.protocol, kind) : 0.0;
  // One rank: a local copy at the GPU's own link rate (NCCL runs a copy kernel).
  p.time_us = latency + (bytes > 0.0 ? bytes / (1000.0 * algbw) : 0.0);
  return p;
}

}  // namespace twinccl::sim::detail
