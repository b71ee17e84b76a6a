// Flow fidelity: build the program, play it in SimGrid, and read time, link loads and transfers.
//
// How it works. time = NCCL's base latency (once, when software latency is on; algorithms NCCL has
// no model for are charged the ring's Simple latencies; nvls_tree, played as the hierarchical
// schedule, NCCL's whole NVLS-tree latency instead of per-hop delays) + the playback's makespan;
// compressed rings: the slowest path through the rounds (ring_path_s). Channels 0 = one per GPU of
// a node across nodes, with rail_ranks rotating each channel onto its rail; 1 inside a node.
// Every transfer waits NCCL's per-hop latency of its algorithm, protocol and route class before
// its bytes move (intra or network hop, as analytic_nccl.cc charges them). Protocols as NCCL's
// model: a transfer's wire bytes are its data bytes x busBw / the protocol's bandwidth (ring LL
// min(llMax, 0.5 busBw), LL128 min(0.92 busBw, ch x 36.7), tree's factors and correction), so
// LL never wins at large sizes. Network links run at NCCL's share of the NIC line rate
// (network_efficiency: 48 of 50 GB/s), and for ring/tree/PAT the GPU's NVLink or PCIe link at
// what NCCL's channel search finds (12 x 30 of 370.8 GB/s on H100). NVLS and NVLS-tree: switch flows (flow_nvls.cc). Link loads: a transfer's wire
// bytes on every link direction of its route (both directions together on half-duplex links);
// busy time = bytes / bandwidth; utilisation = busy time / collective time.
#include <algorithm>
#include <cmath>
#include <map>

#include "flow_build.h"
#include "model.h"
#include "twinccl/errors.h"
#include "twinccl/perf_math.h"

namespace twinccl::sim::detail {
namespace {

constexpr int kCompressAboveRanks = 64;
// Tree pipelining when the request gives no chunk: NCCL Simple's step (a 4 MiB buffer in 8 steps),
// fewer pieces when the program would pass this many transfers (SimGrid's time and memory).
constexpr double kPipelineChunkBytes = 512.0 * 1024.0;
constexpr double kMaxPipelinedTransfers = 200'000.0;

bool ring_compressible(const Resolved& r) {
  const OpKind k = r.spec.kind;
  return r.algorithm == "ring" && r.spec.nranks > 1 &&
         (k == OpKind::all_reduce || k == OpKind::reduce_scatter || k == OpKind::all_gather);
}

// Channels and pipelining as the request says, else: one channel per GPU of a node across nodes
// (each rotation of rail_ranks once: every rail carries its share, as NCCL's channels do), one
// inside a node (every channel would take the same routes); a tree pipelined in NCCL's steps.
AlgorithmParams flow_params(const topo::Topology& topology, const TopologyView& view,
                            const Resolved& r) {
  AlgorithmParams p = r.params;
  if (p.channels <= 0) {
    p.channels = view.nodes > 1 && topology.summary().nics_per_node > 0
                     ? std::max(1, view.ranks_per_node)
                     : 1;
  }
  if (p.chunk_elements == 0 && r.algorithm == "tree" && r.spec.nranks > 1 && r.spec.count > 0) {
    const double half_per_channel =
        std::ceil(static_cast<double>(r.spec.count) / (2.0 * p.channels));
    const double bytes = half_per_channel * static_cast<double>(size_of(r.dtype));
    const double cap =
        std::max(1.0, std::floor(kMaxPipelinedTransfers / (4.0 * r.spec.nranks * p.channels)));
    const double pieces = std::clamp(std::ceil(bytes / kPipelineChunkBytes), 1.0, cap);
    p.chunk_elements = static_cast<std::size_t>(std::ceil(half_per_channel / pieces));
  }
  return p;
}

// Compressed ring: the time of the slowest path through the rounds. Ranks do not wait for their
// sends (flow_simgrid.cc), so the last rank finishes after the edges its data crossed: at global
// step i the path takes ring edge (r - steps + i) mod n, costing that edge's slowest flow in the
// step's round. Symmetric rings (every edge alike) give sum(count x round time), as lockstep.
double ring_path_s(const FlowProgram& program, const FlowTimes& times) {
  const auto n = static_cast<long long>(program.nranks);
  const std::size_t nn = static_cast<std::size_t>(n);
  std::vector<std::vector<double>> prefix(program.rounds.size());  // over the cycle twice
  std::vector<double> total(program.rounds.size(), 0.0);
  for (std::size_t i = 0; i < program.rounds.size(); ++i) {
    std::vector<double> cost(nn, 0.0);
    for (int t : program.rounds[i].transfers) {
      const auto e = static_cast<std::size_t>(program.transfers[static_cast<std::size_t>(t)].src_rank);
      cost[e] = std::max(cost[e], times.end_s[static_cast<std::size_t>(t)]);
    }
    prefix[i].assign(2 * nn + 1, 0.0);
    for (std::size_t k = 0; k < 2 * nn; ++k) prefix[i][k + 1] = prefix[i][k] + cost[k % nn];
    total[i] = prefix[i][nn];
  }
  long long steps = 0;
  for (const auto& run : program.round_sequence) steps += std::llround(run.second);
  double longest = 0.0;
  for (long long r = 0; r < n; ++r) {
    long long at = 0;
    double sum = 0.0;
    for (const auto& [round, count] : program.round_sequence) {
      const long long len = std::llround(count);
      const auto start = static_cast<std::size_t>((((r - steps + at) % n) + n) % n);
      const auto rest = static_cast<std::size_t>(len % n);
      const auto& pre = prefix[static_cast<std::size_t>(round)];
      sum += static_cast<double>(len / n) * total[static_cast<std::size_t>(round)] +
             (pre[start + rest] - pre[start]);
      at += len;
    }
    longest = std::max(longest, sum);
  }
  return longest;
}

}  // namespace

// Link bandwidth as NCCL's channels see it: NICs at NCCL's inter speed; for channel algorithms
// the GPU's own link (NVLink or PCIe) at what NCCL's intra channel search finds on one node.
RouteTable::LinkScale link_scale(const TopologyView& view, std::optional<NcclAlgo> algo) {
  RouteTable::LinkScale scale;
  scale.network = network_efficiency(view);
  // Only for a known arch: NCCL's speed lists are per arch (a torus of unknown arch keeps its rates).
  if ((algo == NcclAlgo::ring || algo == NcclAlgo::tree || algo == NcclAlgo::pat) &&
      view.intra_gbps > 0.0 && view.arch != topo::GpuArch::unknown) {
    TopologyView one_node = view;
    one_node.nodes = 1;
    const double share = std::min(1.0, nccl_channels(one_node, 0).bus_gbps / view.intra_gbps);
    (view.intra_class == LinkClass::pcie ? scale.pcie : scale.nvlink) = share;
  }
  return scale;
}

std::vector<LinkLoad> link_loads(const topo::Topology& topology, const FlowProgram& program,
                                 const std::vector<double>& transfer_repeats, double time_s) {
  std::map<std::pair<int, bool>, double> bytes;  // (program link, forward) -> bytes
  for (std::size_t t = 0; t < program.transfers.size(); ++t) {
    const FlowTransfer& tr = program.transfers[t];
    for (const FlowHop& hop : program.routes[static_cast<std::size_t>(tr.route)].hops) {
      const bool dir = program.links[static_cast<std::size_t>(hop.link)].full_duplex ? hop.forward : true;
      bytes[{hop.link, dir}] += tr.bytes * transfer_repeats[t];
    }
  }
  std::vector<LinkLoad> loads;
  for (const auto& [key, b] : bytes) {
    const FlowLink& fl = program.links[static_cast<std::size_t>(key.first)];
    const topo::Link& l = topology.link(fl.topology_link);
    const std::string& a = topology.vertex(l.a).name;
    const std::string& z = topology.vertex(l.b).name;
    LinkLoad load;
    load.name = !fl.full_duplex ? a + "<->" + z : key.second ? a + "->" + z : z + "->" + a;
    load.link = fl.topology_link;
    load.bytes = b;
    load.busy_us = fl.fatpipe ? 0.0 : b / fl.bandwidth_bytes_per_s * 1e6;
    load.utilisation = time_s > 0.0 ? load.busy_us / (time_s * 1e6) : 0.0;
    loads.push_back(std::move(load));
  }
  std::stable_sort(loads.begin(), loads.end(),
                   [](const LinkLoad& x, const LinkLoad& y) { return x.busy_us > y.busy_us; });
  return loads;
}

FlowReport flow(const topo::Topology& topology, const Resolved& r, const FlowOptions& options) {
  FlowProgram program;
  program.nranks = r.spec.nranks;
  const TopologyView view = view_of(topology, r.spec.nranks);
  const std::optional<NcclAlgo> nccl = nccl_algo_for(r.algorithm, r.spec.kind);
  RouteTable routes(topology, program, link_scale(view, nccl));
  const std::size_t pi = index_of(r.protocol);
  const double bytes = algbw_bytes(r.spec.kind, r.spec.count, r.dtype, r.spec.nranks);
  const bool nvls = nccl == NcclAlgo::nvls || nccl == NcclAlgo::nvls_tree;
  TransferCost cost;
  cost.element_bytes = static_cast<double>(size_of(r.dtype));
  cost.wire_bytes_per_byte = kNccl.wire_bytes_per_byte[pi];
  if (nccl == NcclAlgo::ring || nccl == NcclAlgo::tree || nccl == NcclAlgo::pat) {
    // NCCL's protocol factors and caps as wire bytes: busBw over the protocol's bandwidth.
    const ChannelPlan plan = nccl_channels(view, r.params.channels);
    const double protocol_bw =
        nccl_bus_bandwidth(view, plan, *nccl, r.protocol, r.spec.kind) *
        (nccl == NcclAlgo::tree ? nccl_tree_correction(r.protocol, r.spec.kind, bytes) : 1.0);
    if (protocol_bw > 0.0) cost.wire_bytes_per_byte = std::max(1.0, plan.bus_gbps / protocol_bw);
  }
  if (r.software_latency && r.spec.nranks > 1) {
    const NcclAlgo la = latency_algo(nccl);
    if (nvls || (la == NcclAlgo::nvls_tree)) {
      // Switch flows (or the hierarchical stand-in): NCCL's whole latency once, no hop delays.
      program.fixed_latency_s = nccl_latency_us(view, la, r.protocol, r.spec.kind, bytes) * 1e-6;
    } else {
      const LatencyParts l = nccl_latency_parts(view, la, r.protocol, r.spec.kind, bytes);
      program.fixed_latency_s = l.base_us * 1e-6;
      cost.delay_by_route_class_s = {l.intra_hop_us * 1e-6, l.intra_hop_us * 1e-6,
                                     l.net_hop_us * 1e-6};
    }
  }
  const AlgorithmParams params = flow_params(topology, view, r);
  const ChannelRanks rails = rail_ranks(topology, r.spec.nranks);
  const bool compress =
      ring_compressible(r) &&
      (r.compression == RoundCompression::on ||
       (r.compression == RoundCompression::automatic && r.spec.nranks > kCompressAboveRanks));
  if (nvls && program_for_nvls(topology, view, r, *nccl, routes, program)) {
    // switch flows built
  } else if (compress) {
    program_for_ring(r.spec, params, cost, routes, program, rails);
  } else {
    program_from_schedule(build_schedule(r.spec, schedule_algorithm(r.algorithm), params), cost,
                          routes, program, rails);
  }
  FlowTimes times;
  if (!program.transfers.empty()) times = play_in_child(program);

  // Makespan, and how many times each transfer happens (compressed rounds repeat).
  std::vector<double> repeats(program.transfers.size(), 1.0);
  double makespan_s = 0.0;
  std::vector<double> round_duration(program.rounds.size(), 0.0);
  if (program.compressed) {
    std::fill(repeats.begin(), repeats.end(), 0.0);
    for (std::size_t i = 0; i < program.rounds.size(); ++i) {
      for (int t : program.rounds[i].transfers) {
        round_duration[i] = std::max(round_duration[i], times.end_s[static_cast<std::size_t>(t)]);
      }
    }
    for (const auto& [round, count] : program.round_sequence) {
      for (int t : program.rounds[static_cast<std::size_t>(round)].transfers) {
        repeats[static_cast<std::size_t>(t)] += count;
      }
    }
    if (!program.transfers.empty()) makespan_s = ring_path_s(program, times);
  } else {
    for (double e : times.end_s) makespan_s = std::max(makespan_s, e);
  }
  const double time_s = program.fixed_latency_s + makespan_s;

  FlowReport report;
  report.prediction.time_us = time_s * 1e6;
  report.prediction.channels = params.channels;
  report.prediction.model = "flow";
  report.links = link_loads(topology, program, repeats, time_s);
  if (options.record_transfers) {
    const auto record = [&](int t, double origin_s, int step) {
      if (report.transfers.size() >= options.max_transfers) {
        report.transfers_truncated = true;
        return false;
      }
      const FlowTransfer& tr = program.transfers[static_cast<std::size_t>(t)];
      const FlowRoute& route = program.routes[static_cast<std::size_t>(tr.route)];
      report.transfers.push_back(
          {.src = route.src < program.nranks ? route.src : -1,  // -1: an NVSwitch
           .dst = route.dst < program.nranks ? route.dst : -1,
           .step = step,
           .bytes = tr.bytes,
           .start_us = (program.fixed_latency_s + origin_s + times.start_s[static_cast<std::size_t>(t)]) * 1e6,
           .end_us = (program.fixed_latency_s + origin_s + times.end_s[static_cast<std::size_t>(t)]) * 1e6});
      return true;
    };
    if (program.compressed) {
      double origin = 0.0;
      int step = 0;
      for (const auto& [round, count] : program.round_sequence) {
        for (double k = 0; k < count; k += 1.0, ++step) {
          for (int t : program.rounds[static_cast<std::size_t>(round)].transfers) {
            if (!record(t, origin, step)) return report;
          }
          origin += round_duration[static_cast<std::size_t>(round)];
        }
      }
    } else {
      for (std::size_t t = 0; t < program.transfers.size(); ++t) {
        if (!record(static_cast<int>(t), 0.0, program.transfers[t].step)) break;
      }
      std::stable_sort(report.transfers.begin(), report.transfers.end(),
                       [](const TransferRecord& a, const TransferRecord& b) {
                         return a.start_us < b.start_us;
                       });
    }
  }
  return report;
}

}  // namespace twinccl::sim::detail
