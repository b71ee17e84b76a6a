// predict / compare_all / simulate_flow: thin layers over the one Tuner (tuner.h). predict asks
// the tuner for its choice (NCCL's analytic model among NCCL's algorithms, or the forced ones) and
// times that choice at the requested fidelity, so flow never picks by its own timing;
// compare_all times every pair the tuner finds applicable at the requested fidelity (but a pair
// the caller already timed with predict) and marks the tuner's choice with its ranking time
// (Choice::rank_us).
#include <algorithm>

#include "host_launch.h"
#include "model.h"
#include "tuner_internal.h"
#include "twinccl/ascii_case.h"
#include "twinccl/errors.h"
#include "twinccl/perf_math.h"

namespace twinccl::sim {
namespace {

using detail::Resolved;

// time -> algbw/busbw via perf_math.h.
void fill_bandwidths(Prediction& p, const CollectiveSpec& spec, DataType dtype) {
  const double bytes = algbw_bytes(spec.kind, spec.count, dtype, spec.nranks);
  p.algbw_gbps = p.time_us > 0.0 ? bytes / (p.time_us * 1e-6) / 1e9 : 0.0;
  p.busbw_gbps = p.algbw_gbps * busbw_factor(spec.kind, spec.nranks);
}

Resolved resolve(const topo::Topology& topology, const Request& request) {
  Resolved r;
  r.spec = request.spec;
  r.dtype = request.dtype;
  r.algorithm = request.algorithm;
  r.params = request.params;
  r.software_latency = request.software_latency;
  r.nccl_version = request.nccl_version;
  r.compression = request.compression;
  r.aggregate_symmetric_flows = request.aggregate_symmetric_flows;
  const int gpus = topology.gpu_count();
  if (r.spec.nranks == 0) r.spec.nranks = gpus;
  if (r.spec.nranks < 1 || r.spec.nranks > gpus) {
    throw InvalidArgument("sim request for " + std::string(twinccl::name(r.spec.kind)) +
                          ": spec.nranks=" + std::to_string(request.spec.nranks) +
                          " is outside 1.." + std::to_string(gpus) + " (topology '" +
                          topology.name() + "' has " + std::to_string(gpus) + " GPUs)");
  }
  if (!is_valid(r.dtype)) {
    throw InvalidArgument("sim request: dtype " + std::to_string(static_cast<int>(r.dtype)) +
                          " is not a DataType");
  }
  if (request.gpus_per_thread < 0) {
    throw InvalidArgument(
        "sim request: gpus_per_thread=" + std::to_string(request.gpus_per_thread) +
        " must be >= 0 (0 = the kernels alone, N = GPUs one host thread launches)");
  }
  if (r.params.channels < 0 || r.params.channels > kMaxRequestChannels) {
    throw InvalidArgument("sim request: params.channels=" + std::to_string(r.params.channels) +
                          " must be in 0.." + std::to_string(kMaxRequestChannels) +
                          " (0 = the model's choice; NCCL has at most " +
                          std::to_string(kMaxRequestChannels) + " channels, MAXCHANNELS)");
  }
  return r;
}

// The tuner of the request's communicator: GPUs 0..nranks-1, the request's ranks per node.
Tuner tuner_for(const topo::Topology& topology, const Resolved& r) {
  return Tuner(topology, r.spec.nranks, r.params.ranks_per_node, r.software_latency,
               r.nccl_version);
}

TunerCall call_of(const Resolved& r, const Request& request) {
  TunerCall call;
  call.spec = r.spec;
  call.dtype = r.dtype;
  call.algorithm = request.algorithm;
  call.protocol = request.protocol;
  call.allowed_algorithms = request.allowed_algorithms;
  call.allowed_protocols = request.allowed_protocols;
  call.nccl_proto_set = request.nccl_proto_set;
  call.channels = r.params.channels;
  call.one_process_per_gpu = request.gpus_per_thread <= 1;
  call.in_place = request.in_place;
  return call;
}

// NCCL's one-rank path (enqueue.cc taskAppend, v2.30.7-1 :3039, v2.28.9-1 :2569: every
// collective of a one-rank communicator goes to ncclLaunchOneRank, device/onerank.cu, before any
// algorithm is chosen and before all_to_all, gather and scatter become send/recv): a float avg
// becomes premul_sum (hostToDevRedOp), which a scaling kernel runs in place or not; any other op
// is a cudaMemcpyAsync out of place and nothing in place (an integer avg's post-division by one
// rank too). "" where NCCL runs a collective (more ranks; send/recv, barrier).
std::string one_rank_path(const Resolved& r, const Request& request) {
  if (r.spec.nranks != 1) return "";
  const OpKind k = r.spec.kind;
  const bool reduces =
      k == OpKind::all_reduce || k == OpKind::reduce || k == OpKind::reduce_scatter;
  const bool moves = k == OpKind::all_gather || k == OpKind::broadcast || k == OpKind::all_to_all ||
                     k == OpKind::gather || k == OpKind::scatter;
  if (!reduces && !moves) return "";
  const bool scales = reduces && (request.op == ReduceKind::premul_sum ||
                                  (request.op == ReduceKind::avg && is_floating(r.dtype)));
  if (scales) return "scale";
  return request.in_place ? "none" : "copy";
}

// The choice timed at `fidelity`: the tuner's analytic time, or flow playing it; then the host
// side nccl-tests measures (host_launch.h), after the choice, so it never changes it.
Prediction evaluate(const topo::Topology& topology, const Tuner& tuner, const Resolved& base,
                    const Choice& c, const Request& request) {
  const Fidelity fidelity = request.fidelity;
  Prediction p;
  p.one_rank = one_rank_path(base, request);
  // One rank: nothing crosses a link (NCCL's local copy, analytic_nccl.cc); flow plays no flow,
  // so both fidelities take the copy's time.
  if (fidelity == Fidelity::flow && base.spec.nranks > 1) {
    Resolved r = base;
    r.algorithm = c.algorithm;
    r.protocol = c.protocol;
    r.params.ranks_per_node = tuner.ranks_per_node();
    p = detail::flow(topology, r, {}).prediction;
  } else {
    p.channels = c.channels;
    p.model = c.model;
    p.time_us = p.one_rank == "none" ? 0.0 : c.time_us;  // in place, one rank: no device work
  }
  // all_to_all, gather, scatter: the tuner times a what-if schedule (alpha-beta: nothing crosses
  // a link, 0 us); NCCL copies them as the others (analytic_nccl.cc's local copy).
  const bool what_if_kind = base.spec.kind == OpKind::all_to_all ||
                            base.spec.kind == OpKind::gather || base.spec.kind == OpKind::scatter;
  const double copy_gbps = detail::device_copy_algbw_gbps(tuner.view());
  if (what_if_kind && (p.one_rank == "copy" || p.one_rank == "scale") && copy_gbps > 0.0) {
    p.time_us = algbw_bytes(base.spec.kind, base.spec.count, base.dtype, 1) / (1000.0 * copy_gbps);
  }
  p.algorithm = c.algorithm;
  p.protocol = c.protocol;
  p.nranks = base.spec.nranks;
  p.fidelity = fidelity;
  p.time_us = detail::host_bound_time_us(p.time_us, request.gpus_per_thread,
                                         detail::host_launch_for(topology, tuner.view()));
  fill_bandwidths(p, base.spec, base.dtype);
  return p;
}

}  // namespace

namespace detail {
HostLaunch host_launch_for(const topo::Topology& topology, const TopologyView& view) {
  // RCCL's base latency already holds the per-call launch rccl-tests sees (analytic_rccl.cc), so
  // in one cdna3 node only a topology's own host_launch_us adds one.
  HostLaunch launch = host_launch_of(topology);
  if (rccl_models(view) && !(topology.facts().host_launch_us > 0.0)) launch.call_us = 0.0;
  return launch;
}
}  // namespace detail

std::vector<Prediction> compare_all(const topo::Topology& topology, const Request& request,
                                    const Prediction* timed) {
  const Resolved base = resolve(topology, request);
  const Tuner tuner = tuner_for(topology, base);
  TunerCall unforced = call_of(base, request);
  unforced.algorithm.clear();
  unforced.protocol.reset();
  const Choice chosen = tuner.choose(unforced);
  std::vector<Prediction> out;
  for (const Choice& c : tuner.applicable(call_of(base, request))) {
    const bool known = timed != nullptr && timed->algorithm == c.algorithm &&
                       timed->protocol == c.protocol && timed->fidelity == request.fidelity &&
                       timed->nranks == base.spec.nranks;
    const bool is_choice = c.algorithm == chosen.algorithm && c.protocol == chosen.protocol;
    out.push_back(known ? *timed : evaluate(topology, tuner, base, c, request));
    out.back().rank_us = c.rank_us;
    out.back().tuner_choice = is_choice;
    if (is_choice) out.back().chosen_by = chosen.chosen_by;
    // One rank: NCCL runs no algorithm, so there is one row (the copy), not a pair per algorithm.
    if (!out.back().one_rank.empty()) {
      if (!is_choice) out.pop_back();
      continue;
    }
  }
  // A choice the ranking does not list (RCCL's MSCCL all-pairs, chosen by RCCL's own rule): its
  // row too, marked as the choice.
  const bool listed =
      std::any_of(out.begin(), out.end(), [](const Prediction& p) { return p.tuner_choice; });
  if (!listed && request.algorithm.empty() && !request.protocol) {
    out.push_back(evaluate(topology, tuner, base, chosen, request));
    out.back().rank_us = chosen.rank_us;
    out.back().tuner_choice = true;
    out.back().chosen_by = chosen.chosen_by;
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Prediction& a, const Prediction& b) { return a.time_us < b.time_us; });
  return out;
}

Prediction predict(const Tuner& tuner, const Request& request) {
  const Resolved base = resolve(tuner.topology(), request);
  const bool first_gpus = [&] {
    for (int r = 0; r < tuner.nranks(); ++r) {
      if (tuner.ranks()[static_cast<std::size_t>(r)] != r) return false;
    }
    return true;
  }();
  if (!first_gpus || tuner.nranks() != base.spec.nranks ||
      tuner.software_latency() != base.software_latency ||
      tuner.nccl_version() != base.nccl_version ||
      (base.params.ranks_per_node != 0 && base.params.ranks_per_node != tuner.ranks_per_node())) {
    throw InvalidArgument("sim request for " + std::string(twinccl::name(base.spec.kind)) + " on " +
                          std::to_string(base.spec.nranks) +
                          " ranks does not fit the tuner given (built for GPUs 0.." +
                          std::to_string(tuner.nranks() - 1) +
                          " with its own ranks_per_node, software latency "
                          "and nccl_version)");
  }
  return evaluate(tuner.topology(), tuner, base, tuner.choose(call_of(base, request)), request);
}

Prediction predict(const topo::Topology& topology, const Request& request) {
  return predict(tuner_for(topology, resolve(topology, request)), request);
}

FlowReport simulate_flow(const topo::Topology& topology, const Request& request,
                         const FlowOptions& options) {
  if (request.algorithm.empty()) {
    throw InvalidArgument("simulate_flow: request.algorithm must be set (use predict() to choose)");
  }
  Resolved r = resolve(topology, request);
  const Tuner tuner = tuner_for(topology, r);
  const Choice c = tuner.choose(call_of(r, request));  // checks; an unset protocol: the tuner's
  r.protocol = c.protocol;
  r.params.ranks_per_node = tuner.ranks_per_node();
  FlowReport report = detail::flow(topology, r, options);
  report.prediction.algorithm = r.algorithm;
  report.prediction.protocol = r.protocol;
  report.prediction.nranks = r.spec.nranks;
  report.prediction.fidelity = Fidelity::flow;
  fill_bandwidths(report.prediction, r.spec, r.dtype);
  return report;
}

std::string label(const Prediction& p) {
  if (!p.one_rank.empty()) return "one_rank/" + p.one_rank;
  return p.algorithm + "/" + std::string(name(p.protocol));
}

std::string_view name(Protocol protocol) {
  switch (protocol) {
    case Protocol::ll:
      return "LL";
    case Protocol::ll128:
      return "LL128";
    case Protocol::simple:
      return "Simple";
  }
  return "invalid";
}

std::string_view name(Fidelity fidelity) {
  return fidelity == Fidelity::flow ? "flow" : "analytic";
}

Protocol parse_protocol(std::string_view text) {
  const std::string t = lowercase_ascii(text);
  if (t == "ll") return Protocol::ll;
  if (t == "ll128") return Protocol::ll128;
  if (t == "simple") return Protocol::simple;
  throw InvalidArgument("unknown protocol '" + std::string(text) +
                        "'; accepted: LL, LL128, Simple");
}

Fidelity parse_fidelity(std::string_view text) {
  const std::string t = lowercase_ascii(text);
  if (t == "analytic") return Fidelity::analytic;
  if (t == "flow") return Fidelity::flow;
  throw InvalidArgument("unknown fidelity '" + std::string(text) + "'; accepted: analytic, flow");
}

}  // namespace twinccl::sim
