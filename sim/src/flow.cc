// Flow fidelity: build the program, play it in SimGrid, and read time, link loads and transfers.
//
// How it works. time = NCCL's base latency (once, when software latency is on; algorithms NCCL has
// no model for are charged the ring's Simple latencies) + the playback's makespan; compressed rings add each round's duration times its repeats.
// Every transfer waits NCCL's per-hop latency of its algorithm, protocol and route class before
// its bytes move; LL and LL128 move 2x and 128/120x the data bytes. Link loads: a transfer's wire
// bytes on every link direction of its route (both directions together on half-duplex links);
// busy time = bytes / bandwidth; utilisation = busy time / collective time.
#include <algorithm>
#include <map>

#include "flow_build.h"
#include "model.h"
#include "twinccl/errors.h"

namespace twinccl::sim::detail {
namespace {

constexpr int kCompressAboveRanks = 64;

bool ring_compressible(const Resolved& r) {
  const OpKind k = r.spec.kind;
  return r.algorithm == "ring" && r.spec.nranks > 1 &&
         (k == OpKind::all_reduce || k == OpKind::reduce_scatter || k == OpKind::all_gather);
}

}  // namespace

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
  RouteTable routes(topology, program);
  const std::optional<NcclAlgo> nccl = nccl_algo_for(r.algorithm, r.spec.kind);
  const std::size_t pi = index_of(r.protocol);
  TransferCost cost;
  cost.element_bytes = static_cast<double>(size_of(r.dtype));
  cost.wire_bytes_per_byte = kNccl.wire_bytes_per_byte[pi];
  if (r.software_latency && r.spec.nranks > 1) {
    const NcclAlgo la = latency_algo(nccl);
    program.fixed_latency_s = at(kNccl.base_latency_us, la, pi) * 1e-6;
    for (std::size_t c = 0; c < 3; ++c) {
      cost.delay_by_route_class_s[c] = at(kNccl.hop_latency_us[c], la, pi) * 1e-6;
    }
  }
  AlgorithmParams params = r.params;
  params.channels = std::max(1, params.channels);
  const bool compress =
      ring_compressible(r) &&
      (r.compression == RoundCompression::on ||
       (r.compression == RoundCompression::automatic && r.spec.nranks > kCompressAboveRanks));
  if (compress) {
    program_for_ring(r.spec, params, cost, routes, program);
  } else {
    program_from_schedule(build_schedule(r.spec, r.algorithm, params), cost, routes, program);
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
      makespan_s += count * round_duration[static_cast<std::size_t>(round)];
      for (int t : program.rounds[static_cast<std::size_t>(round)].transfers) {
        repeats[static_cast<std::size_t>(t)] += count;
      }
    }
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
          {.src = route.src,
           .dst = route.dst,
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
