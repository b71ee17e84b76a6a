// The one tuner (tuner.h).
//
// How it works. Built once per communicator: the topology as NCCL's model sees it for the
// communicator's GPUs (view_of, with the nodes the ranks actually span and how many sit in each),
// as ncclTopoTuneModel fills its tables once. Per call (ncclTopoGetAlgoTime): list the algorithms
// that exist for the collective (the registry's, plus nvls_tree for all_reduce), each with why it
// does not apply (the schedule's own reason; NVLS needs an NVLS-capable node and runs inside one
// node; NVLS-tree needs whole nodes of one), time every applicable (algorithm, protocol) with
// NCCL's analytic model (alpha-beta for what-if algorithms NCCL has no model for) and take the
// fastest of NCCL's own (ring, tree, nvls, nvls_tree; pat only with one GPU per node, as NCCL).
// Only where none of NCCL's applies (all_to_all, gather, scatter) does the fastest what-if
// algorithm win. Pairs are ranked by their time on all the communicator's channels and report
// the time on the channels launched (NCCL drops channels for small calls after choosing). A
// forced algorithm or protocol is checked, never replaced. Example, 8 GPUs of
// dgx-h100, 1 GiB all_reduce: ring/Simple, tree/Simple, nvls/Simple, ... timed; nvls is fastest.
// The ranking itself, with what leaves pairs out: tuner_ranked.cc.
#include "twinccl/sim/tuner.h"

#include <algorithm>
#include <map>

#include "model.h"
#include "p2p_net_messages.h"
#include "tuner_internal.h"
#include "twinccl/errors.h"
#include "twinccl/perf_math.h"
#include "what_if_latency.h"

namespace twinccl::sim {
namespace {

std::vector<int> first_ranks(const topo::Topology& topology, int nranks) {
  const int n = nranks == 0 ? topology.gpu_count() : nranks;
  if (n < 1 || n > topology.gpu_count()) {
    throw InvalidArgument("tuner: nranks=" + std::to_string(nranks) + " is outside 1.." +
                          std::to_string(topology.gpu_count()) + " (topology '" + topology.name() +
                          "' has " + std::to_string(topology.gpu_count()) + " GPUs)");
  }
  std::vector<int> ranks(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) ranks[static_cast<std::size_t>(r)] = r;
  return ranks;
}

}  // namespace

namespace detail {
// The NCCL model's view of the communicator's GPUs: the topology's link facts, with the nodes
// the ranks span and the ranks of the first node.
TopologyView view_of_ranks(const topo::Topology& topology, const std::vector<int>& ranks) {
  TopologyView v = view_of(topology, static_cast<int>(ranks.size()));
  std::map<int, int> per_node;
  for (int r : ranks) ++per_node[topology.vertex(topology.gpu(r)).node];
  v.nodes = static_cast<int>(per_node.size());
  v.ranks_per_node = per_node.begin()->second;
  return v;
}

std::vector<Protocol> protocols_applicable(std::string_view algorithm, OpKind kind) {
  if (!nccl_algo_for(algorithm, kind)) return {Protocol::simple};
  return protocols_for(algorithm);
}
}  // namespace detail

Tuner::Tuner(const topo::Topology& topology, int nranks, int ranks_per_node, bool software_latency,
             int nccl_version)
    : Tuner(topology, first_ranks(topology, nranks), ranks_per_node, software_latency,
            nccl_version) {}

Tuner::Tuner(const topo::Topology& topology, std::vector<int> ranks, int ranks_per_node,
             bool software_latency, int nccl_version)
    : topology_(topology), ranks_(std::move(ranks)), software_latency_(software_latency) {
  if (nccl_version != 0 &&
      (nccl_version < detail::kNcclVersionCodeMin || nccl_version > detail::kNcclVersionCodeMax)) {
    throw InvalidArgument(
        "tuner: nccl_version=" + std::to_string(nccl_version) + " is not an NCCL_VERSION_CODE (" +
        std::to_string(detail::kNcclVersionCodeMin) + ".." +
        std::to_string(detail::kNcclVersionCodeMax) + ", 22602 = 2.26.2) nor 0 (the newest model)");
  }
  const int gpus = topology.gpu_count();
  if (ranks_.empty()) throw InvalidArgument("tuner: a communicator needs at least one rank");
  std::vector<int> sorted = ranks_;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] < 0 || sorted[i] >= gpus) {
      throw InvalidArgument("tuner: GPU " + std::to_string(sorted[i]) + " is outside 0.." +
                            std::to_string(gpus - 1) + " of topology '" + topology.name() + "'");
    }
    if (i > 0 && sorted[i] == sorted[i - 1]) {
      throw InvalidArgument("tuner: GPU " + std::to_string(sorted[i]) +
                            " appears twice among the communicator's ranks");
    }
  }
  if (ranks_per_node < 0) {
    throw InvalidArgument("tuner: ranks_per_node=" + std::to_string(ranks_per_node) +
                          " must be >= 0 (0 = the topology's)");
  }
  detail::TopologyView view = detail::view_of_ranks(topology, ranks_);
  view.nccl_version = nccl_version;
  view_ = std::make_shared<const detail::TopologyView>(view);
  nodes_ = view_->nodes;
  // Node-aware schedules (tree, hierarchical) group ranks by node when the nodes are whole and
  // equal; a forced ranks_per_node overrides.
  std::map<int, int> per_node;
  for (int r : ranks_) ++per_node[topology.vertex(topology.gpu(r)).node];
  bool equal = true;
  for (const auto& [node, count] : per_node) equal = equal && count == per_node.begin()->second;
  ranks_per_node_ = ranks_per_node > 0    ? ranks_per_node
                    : nodes_ > 1 && equal ? per_node.begin()->second
                                          : 0;
}

int Tuner::nccl_version() const { return view_->nccl_version; }

AlgorithmParams Tuner::schedule_params(int channels) const {
  AlgorithmParams params;
  params.channels = std::max(1, channels);
  params.ranks_per_node = ranks_per_node_;
  return params;
}

CollectiveSpec Tuner::settled(const CollectiveSpec& spec) const {
  CollectiveSpec s = spec;
  if (s.nranks == 0) s.nranks = nranks();
  if (s.nranks != nranks()) {
    throw InvalidArgument("tuner: the call has spec.nranks=" + std::to_string(spec.nranks) +
                          ", the communicator " + std::to_string(nranks()) + " ranks");
  }
  return s;
}

Choice Tuner::time(const CollectiveSpec& spec, DataType dtype, const std::string& algorithm,
                   Protocol protocol, int channels, double& rank_us) const {
  detail::Resolved r;
  r.spec = spec;
  r.dtype = dtype;
  r.algorithm = algorithm;
  r.protocol = protocol;
  r.params = schedule_params(1);
  r.params.channels = channels;  // 0 = NCCL's choice
  r.software_latency = software_latency_;
  const auto algo = detail::nccl_algo_for(algorithm, spec.kind);
  // An algorithm NCCL has no model for: the ring's software latency, once for both terms below.
  const detail::WhatIfLatency hops =
      !algo && software_latency_ && spec.nranks > 1
          ? detail::what_if_latency(*view_, protocol, spec.kind,
                                    algbw_bytes(spec.kind, spec.count, dtype, spec.nranks))
          : detail::WhatIfLatency{};
  Prediction p = algo ? detail::analytic_nccl(*view_, r, *algo)
                      : detail::analytic_alpha_beta(topology_, *view_, r, hops);
  // A one-step exchange is grouped send/recv (NCCL's all_to_all, gather, scatter and their _v
  // forms): across nodes the net plugin's proxy also spends host time on every network message's
  // completions, and the first messages' wait replaces the one network hop alpha-beta charged
  // (flow's too: what_if_latency.h); p2p_net_messages.h says which kinds and why.
  if (!algo && software_latency_ && detail::traits_of(algorithm).one_step_exchange) {
    p.time_us +=
        detail::grouped_p2p_net_us(*view_, spec, dtype, hops.hop(detail::LinkClass::network));
  }
  rank_us =
      algo ? detail::analytic_nccl(*view_, r, *algo, detail::Channels::all).time_us : p.time_us;
  return Choice{algorithm, protocol, p.channels, p.time_us, p.model, rank_us, {}};
}

Choice Tuner::choose(const TunerCall& call) const {
  if (!call.algorithm.empty()) return applicable(call).front();
  // RCCL's MSCCL all-pairs all_reduce on one MI300X node, chosen before RCCL's tuner
  // (analytic_rccl.cc); flow and the emulator play the ring schedule in its place.
  if (!call.protocol && !call.restricted() && call.channels == 0 && call.one_process_per_gpu &&
      software_latency_) {
    const CollectiveSpec spec = settled(call.spec);
    if (const auto m = detail::msccl_allpairs(*view_, spec.kind, spec.count, size_of(call.dtype),
                                              call.in_place)) {
      return Choice{std::string(detail::kMscclAllpairs),
                    m->protocol,
                    m->channels,
                    m->time_us,
                    "rccl",
                    m->time_us,
                    "RCCL's MSCCL rule"};
    }
  }
  // A cloud's tuner plugin that chooses in NCCL's place (AWS's regions on p5, p5en and p6-b200 from
  // 3 nodes): its algorithm and protocol, timed as any forced choice; where it does not apply, NCCL
  // ranks.
  if (!call.protocol && !call.restricted()) {
    const double bytes = static_cast<double>(call.spec.count) * size_of(call.dtype);
    if (const auto region = detail::efa_region_choice(*view_, call.spec.kind, bytes)) {
      TunerCall forced = call;
      forced.algorithm = region->algorithm;
      forced.protocol = region->protocol;
      const auto cs = candidates(settled(call.spec));
      const bool runs = std::any_of(cs.begin(), cs.end(), [&](const auto& c) {
        return c.first == forced.algorithm && c.second.empty();
      });
      if (runs) {
        Choice c = applicable(forced).front();
        c.chosen_by = "aws-ofi-nccl's region tuner";
        return c;
      }
    }
  }
  // NCCL's own algorithms first, timed alone: the what-if ones (alpha-beta along every rank's
  // routes: ~0.4 s a call at 8192 ranks) are timed only where none of NCCL's may be chosen.
  const std::vector<Choice> nccl = ranked(call, true);
  const auto nccl_choice = [&](const Choice& c) {
    return !detail::traits_of(c.algorithm).nccl_one_gpu_per_node || view_->ranks_per_node == 1;
  };
  const auto it = std::find_if(nccl.begin(), nccl.end(), nccl_choice);
  return it != nccl.end() ? *it : applicable(call).front();
}

Choice Tuner::choose(OpKind kind, std::size_t count, DataType dtype, std::string_view algorithm,
                     std::optional<Protocol> protocol) const {
  TunerCall call;
  call.spec.kind = kind;
  call.spec.count = count;
  call.spec.nranks = nranks();
  call.dtype = dtype;
  call.algorithm = std::string(algorithm);
  call.protocol = protocol;
  return choose(call);
}

std::string_view schedule_for(std::string_view algorithm) {
  return detail::schedule_algorithm(algorithm);
}

std::vector<Protocol> protocols_for(std::string_view algorithm) {
  const detail::AlgorithmTraits* t = detail::find_traits(algorithm);
  if (t != nullptr && t->ll_protocols) return {Protocol::ll, Protocol::ll128, Protocol::simple};
  return {Protocol::simple};
}

}  // namespace twinccl::sim
