// A uniform direct all_to_all with its channel pieces folded, for playback by classes.
//
// How it works. The flow default runs C channels across nodes (one per GPU of a node, 72 on a
// GB200 NVL72 rack), channel c's ranks rotated inside every node (rails.cc): schedule pair
// (r, p) on channel c is GPU pair (rot_c(r), rot_c(p)). The direct all_to_all sends every pair
// the same block of B elements in one step, channel c taking (c+1)B/C - cB/C of them (the
// schedule's lowering): B mod C pieces of ceil(B/C) and the rest of floor(B/C). Since every
// rotation is a permutation of the ranks and every pair's block is alike, each GPU pair (a, b)
// carries exactly one piece of every channel: the same flows (route, bytes, delay) whatever the
// rotations. So the flows are built on one channel (identity mapping, whole blocks) and each
// pair's transfer becomes at most two transfers, of the ceil and floor piece, with `copies` = how
// many pieces of that size: what flow_classes would merge, without building n(n-1)C transfers.
// 4 ranks on 2 channels, B = 3: every pair 0->1, 0->2, ... carries a 2- and a 1-element piece.
#include <algorithm>
#include <cmath>
#include <string>

#include "flow_fluid.h"
#include "twinccl/errors.h"

namespace twinccl::sim::detail {

bool foldable_direct(const Resolved& r, const PricedCall& priced) {
  return r.spec.kind == OpKind::all_to_all && traits_of(priced.schedule).one_step_exchange &&
         priced.params.channels > 1 && priced.params.chunk_elements == 0 && r.spec.nranks > 1 &&
         r.spec.count > 0 && !priced.gpus.perms.empty();
}

CallFlows add_folded_direct_flows(const Tuner& tuner, const Resolved& r, const PricedCall& priced,
                                  RouteTable& routes, FlowProgram& program) {
  PricedCall one = priced;
  one.params.channels = 1;
  one.gpus.perms = {priced.gpus.perms.front()};
  const std::size_t first = program.transfers.size();
  const CallFlows flows = add_call_flows(tuner, r, one, RingForm::steps, routes, program);
  const std::size_t channels = static_cast<std::size_t>(priced.params.channels);
  const std::size_t block = r.spec.count;
  const std::size_t small = block / channels, large_count = block % channels;
  const std::size_t end = program.transfers.size();
  for (std::size_t t = first; t < end; ++t) {
    FlowTransfer& whole = program.transfers[t];
    const double per_element = whole.bytes / static_cast<double>(block);
    if (large_count > 0 && small > 0) {  // the ceil pieces, listed beside the whole's
      FlowTransfer large = whole;
      large.bytes = per_element * static_cast<double>(small + 1);
      large.copies = static_cast<double>(large_count);
      const int id = static_cast<int>(program.transfers.size());
      program.transfers.push_back(large);
      for (int rank : {large.src_rank, large.dst_rank}) {
        program.rank_steps[static_cast<std::size_t>(rank)].front().push_back(id);
      }
    }
    FlowTransfer& rest = program.transfers[t];  // push_back may have moved it
    rest.bytes = per_element * static_cast<double>(small > 0 ? small : small + 1);
    rest.copies = static_cast<double>(small > 0 ? channels - large_count : large_count);
  }
  return flows;
}

void check_direct_size(const Resolved& r, const PricedCall& priced, bool folded) {
  const OpKind k = r.spec.kind;
  const bool every_pair = k == OpKind::all_to_all || k == OpKind::all_to_all_v ||
                          k == OpKind::all_gather || k == OpKind::all_gather_v ||
                          k == OpKind::reduce_scatter || k == OpKind::reduce_scatter_v;
  if (!traits_of(priced.schedule).one_step_exchange || !every_pair) return;
  const double n = r.spec.nranks;
  const double per_pair = folded ? 1.0 : std::max(1, priced.params.channels);
  const double transfers = n * (n - 1) * per_pair;
  if (transfers <= kMaxDirectTransfers) return;
  // The most ranks whose n(n-1) x per_pair transfers fit.
  const auto most = static_cast<long long>(
      std::floor((1.0 + std::sqrt(1.0 + 4.0 * kMaxDirectTransfers / per_pair)) / 2.0));
  throw InvalidArgument(
      "flow fidelity: direct " + std::string(name(k)) + " on " + std::to_string(r.spec.nranks) +
      " ranks builds " + std::to_string(static_cast<long long>(transfers)) + " transfers (" +
      std::to_string(r.spec.nranks) + " x " + std::to_string(r.spec.nranks - 1) + " rank pairs" +
      (folded ? "" : " x " + std::to_string(priced.params.channels) + " channels") +
      "), more than the flow model builds (" +
      std::to_string(static_cast<long long>(kMaxDirectTransfers)) +
      ": its time and memory grow with them); use --fidelity analytic, or at most " +
      std::to_string(most) + " ranks (--ranks)");
}

Expanded expand_copies(const FlowProgram& program) {
  Expanded out;
  out.program = program;
  out.program.transfers.clear();
  std::vector<std::vector<int>> ids(program.transfers.size());
  for (std::size_t t = 0; t < program.transfers.size(); ++t) {
    FlowTransfer one = program.transfers[t];
    const auto copies = static_cast<long long>(std::max(1.0, one.copies));
    one.copies = 1.0;
    for (long long k = 0; k < copies; ++k) {
      ids[t].push_back(static_cast<int>(out.program.transfers.size()));
      out.program.transfers.push_back(one);
      out.origin.push_back(static_cast<int>(t));
    }
  }
  const auto remap = [&](std::vector<int>& list) {
    std::vector<int> mapped;
    for (int t : list) {
      const auto& to = ids[static_cast<std::size_t>(t)];
      mapped.insert(mapped.end(), to.begin(), to.end());
    }
    list = std::move(mapped);
  };
  for (FlowRound& round : out.program.rounds) remap(round.transfers);
  for (auto& steps : out.program.rank_steps) {
    for (auto& step : steps) remap(step);
  }
  return out;
}

}  // namespace twinccl::sim::detail
