// The one tuner: which algorithm, protocol and channel count a collective call uses, and how long
// it takes, for one communicator on one topology. Built once per communicator, asked per call, as
// NCCL tunes once per communicator (ncclTopoTuneModel) and looks up per call (ncclTopoGetAlgoTime).
//
//   sim::Tuner tuner(topo::dgx_h100(), 8);                     // GPUs 0..7, the topology's nodes
//   sim::Choice c = tuner.choose(OpKind::all_reduce, 1 << 28, DataType::float32);
//   // c.algorithm "nvls", c.protocol Simple, c.channels, c.time_us (NCCL's analytic model)
//
// `twinccl perf` (both fidelities), `twinccl replay`, an emulated run's simulated time,
// `twinccl compare` and the emulator's default algorithm when a topology is known all ask a Tuner;
// nothing else chooses. A forced algorithm or protocol that does not apply is an InvalidArgument
// naming why and what applies, never silently replaced.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "twinccl/sim/timing.h"

namespace twinccl::sim {

namespace detail {
struct TopologyView;
}

struct Choice {
  std::string algorithm;  // a registry name, or "nvls_tree" (schedule_for() says what plays it)
  Protocol protocol = Protocol::simple;
  int channels = 1;      // NCCL's channel count for the call (analytic model)
  double time_us = 0.0;  // NCCL's analytic model (or alpha-beta for what-if algorithms)
  std::string model;     // "nccl" or "alpha-beta"
  // What the tuner ranks by: NCCL's model on all the communicator's channels, without the NVLS and
  // tree pipeline fills (time_us has the channels launched and the fills, as the call runs);
  // time_us for what-if algorithms.
  double rank_us = 0.0;
  // Who chose it in NCCL's place, where NCCL's ranking did not: "" = NCCL's own ranking (or a
  // forced algorithm); "RCCL's MSCCL rule", "aws-ofi-nccl's region tuner" (Tuner::choose).
  std::string chosen_by;
};

// One call, as the tuner is asked about it.
struct TunerCall {
  CollectiveSpec spec;  // spec.nranks 0 = the tuner's communicator size
  DataType dtype = DataType::float32;
  std::string algorithm;             // "" = the tuner chooses
  std::optional<Protocol> protocol;  // unset = the tuner chooses (for the algorithm)
  // NCCL_ALGO / NCCL_PROTO lists (Request::allowed_*): the ranking sees only these ({} = all);
  // NCCL's own ranking then chooses (no tuner plugin's or RCCL MSCCL's choice is modelled there).
  std::vector<std::string> allowed_algorithms;
  std::vector<Protocol> allowed_protocols;
  bool nccl_proto_set = false;  // Request::nccl_proto_set: the cloud profile's NCCL_PROTO is off
  bool restricted() const { return !allowed_algorithms.empty() || !allowed_protocols.empty(); }
  int channels = 0;  // 0 = NCCL's choice
  // How the call is issued, where the library's choice depends on it: RCCL runs its MSCCL
  // all-pairs all_reduce on one MI300X node only with one process per GPU (not nccl-tests -g 8)
  // and has in-place and out-of-place size windows (analytic_rccl.cc).
  bool one_process_per_gpu = true;
  bool in_place = false;
};

class Tuner {
 public:
  // ranks: the topology GPU of each communicator rank (distinct, in 0..gpus-1). ranks_per_node
  // 0 = as the ranks fall on the topology's nodes. software_latency false = the network alone.
  // The tuner keeps its own copy of the topology (a copy shares the graph: cheap), so a temporary
  // is fine. nccl_version: the NCCL_VERSION_CODE whose tuning model
  // ranks (22602 = 2.26.2; Request::nccl_version), 0 = the newest model.
  Tuner(const topo::Topology& topology, std::vector<int> ranks, int ranks_per_node = 0,
        bool software_latency = true, int nccl_version = 0);
  // GPUs 0..nranks-1 (nranks 0 = every GPU of the topology).
  Tuner(const topo::Topology& topology, int nranks, int ranks_per_node = 0,
        bool software_latency = true, int nccl_version = 0);

  // NCCL's choice: the fastest (analytic NCCL model) of NCCL's own algorithms that apply (ring,
  // tree, nvls, nvls_tree, pat; pat with one GPU per node only, as NCCL) and their protocols; the
  // what-if ones (direct, halving_doubling, bruck, hierarchical) only where none of NCCL's applies
  // (all_to_all, gather, scatter: NCCL runs them as grouped send/recv). A forced algorithm keeps
  // it (its fastest protocol unless forced too). Throws InvalidArgument when a forced one does not
  // apply.
  Choice choose(const TunerCall& call) const;
  Choice choose(OpKind kind, std::size_t count, DataType dtype, std::string_view algorithm = {},
                std::optional<Protocol> protocol = {}) const;

  // Every applicable (algorithm, protocol) pair for the call (forced ones filter), timed
  // analytically, in NCCL's order (fastest on all channels first; time_us is on the channels
  // launched, which small ring/tree calls reduce); throws like choose() for a forced one that does
  // not apply.
  std::vector<Choice> applicable(const TunerCall& call) const;

  // The algorithms that exist for `kind` (registry order, then nvls_tree for all_reduce), each
  // with why it does not apply to this communicator ("" = it applies).
  std::vector<std::pair<std::string, std::string>> candidates(const CollectiveSpec& spec) const;

  const topo::Topology& topology() const { return topology_; }
  const detail::TopologyView& view() const { return *view_; }
  const std::vector<int>& ranks() const { return ranks_; }
  int nranks() const { return static_cast<int>(ranks_.size()); }
  int nodes() const { return nodes_; }
  int ranks_per_node() const { return ranks_per_node_; }  // 0 when nodes hold unequal counts
  bool software_latency() const { return software_latency_; }
  int nccl_version() const;  // 0 = the newest model
  // The spec as the schedules see it: nranks the communicator's, ranks_per_node for node-aware
  // algorithms (tree, hierarchical) when the ranks span whole nodes.
  AlgorithmParams schedule_params(int channels = 1) const;

 private:
  CollectiveSpec settled(const CollectiveSpec& spec) const;
  // applicable(), or with nccl_only the pairs of NCCL's own algorithms alone (empty when none).
  std::vector<Choice> ranked(const TunerCall& call, bool nccl_only) const;
  // rank_us: the time NCCL's tuner ranks the pair by (all channels; enqueue.cc drops channels
  // for small calls only after choosing).
  Choice time(const CollectiveSpec& spec, DataType dtype, const std::string& algorithm,
              Protocol protocol, int channels, double& rank_us) const;

  topo::Topology topology_;
  std::vector<int> ranks_;
  std::shared_ptr<const detail::TopologyView> view_;  // NCCL's view of these GPUs, once
  int nodes_ = 1;
  int ranks_per_node_ = 0;
  bool software_latency_ = true;
};

// predict() (timing.h) on a tuner built once for the communicator (GPUs 0..n-1 of its topology,
// the request's spec.nranks, software_latency and nccl_version), so a sweep of many sizes tunes
// once, as NCCL does. InvalidArgument when the request is for another communicator.
Prediction predict(const Tuner& tuner, const Request& request);

// The registry schedule that plays `algorithm` (flow, replay, the emulator): itself, or
// "hierarchical" for nvls_tree (NCCL's multi-node NVLS, not a registry algorithm).
std::string_view schedule_for(std::string_view algorithm);

}  // namespace twinccl::sim
