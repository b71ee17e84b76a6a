// predict / compare_all: validate the request, list the applicable (algorithm, protocol) pairs,
// time each with the chosen fidelity and pick the fastest, as NCCL picks the lowest predicted time.
#include <algorithm>
#include <cctype>

#include "model.h"
#include "twinccl/errors.h"
#include "twinccl/perf_math.h"

namespace twinccl::sim {
namespace {

using detail::Resolved;

std::string lower(std::string_view text) {
  std::string s(text);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : ", ") + i;
  return out.empty() ? "(none)" : out;
}

// Protocols an algorithm runs with for this collective: NCCL's LL/LL128 only where NCCL models
// the algorithm with them (ring; tree for all_reduce), Simple everywhere else.
std::vector<Protocol> protocols_applicable(std::string_view algorithm, OpKind kind) {
  if (!detail::nccl_algo_for(algorithm, kind)) return {Protocol::simple};
  return protocols_for(algorithm);
}

std::string protocol_list(const std::vector<Protocol>& ps) {
  std::vector<std::string> names;
  for (Protocol p : ps) names.emplace_back(name(p));
  return join(names);
}

struct Candidate {
  std::string algorithm;
  std::string why_not;  // empty = applies
};

// The algorithms that may serve a request: the registry's, plus "nvls_tree" (NCCL's multi-node
// NVLS, timed by the NCCL model and played as the hierarchical schedule by flow). NVLS runs inside
// one node in NCCL (its multi-node form is NVLS-tree), so "nvls" is refused across nodes.
std::vector<Candidate> candidates(const topo::Topology& topology, const detail::TopologyView& view,
                                  const Resolved& r) {
  AlgorithmParams params = r.params;
  params.channels = std::max(1, params.channels);  // 0 = the model's choice, never fewer than 1
  std::vector<Candidate> out;
  const std::string not_nvls = "needs an NVLS-capable topology (NVSwitch with NVLink SHARP); '" +
                               topology.name() + "' is not";
  for (const Algorithm* a : algorithms_for(r.spec.kind)) {
    Candidate c{std::string(a->name()), a->why_not(r.spec, params)};
    if (c.why_not.empty() && c.algorithm == "nvls") {
      if (!view.nvls_capable) {
        c.why_not = not_nvls;
      } else if (view.nodes > 1) {
        c.why_not = "NCCL runs NVLS inside one node only; the " + std::to_string(r.spec.nranks) +
                    " ranks span " + std::to_string(view.nodes) + " nodes of '" + topology.name() +
                    "' (NCCL's multi-node form is nvls_tree" +
                    (r.spec.kind == OpKind::all_reduce ? ")" : ", for all_reduce only)");
      }
    }
    out.push_back(std::move(c));
  }
  if (r.spec.kind == OpKind::all_reduce) {
    Candidate c{std::string(detail::kNvlsTree), ""};
    if (!view.nvls_capable) {
      c.why_not = not_nvls;
    } else if (view.nodes < 2) {
      c.why_not = "NVLS-tree spans nodes; the " + std::to_string(r.spec.nranks) +
                  " ranks sit in one node of '" + topology.name() + "' (use nvls)";
    } else if (r.spec.nranks % view.ranks_per_node != 0) {
      c.why_not = "needs whole nodes: nranks=" + std::to_string(r.spec.nranks) +
                  " is not a multiple of the " + std::to_string(view.ranks_per_node) +
                  " GPUs per node of '" + topology.name() + "'";
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::string applicable_list(const std::vector<Candidate>& cs) {
  std::vector<std::string> names;
  for (const Candidate& c : cs) {
    if (c.why_not.empty()) names.push_back(c.algorithm);
  }
  return join(names);
}

Resolved resolve(const topo::Topology& topology, const Request& request) {
  Resolved r;
  r.spec = request.spec;
  r.dtype = request.dtype;
  r.algorithm = request.algorithm;
  r.params = request.params;
  r.software_latency = request.software_latency;
  r.compression = request.compression;
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
  if (r.params.channels < 0) {
    throw InvalidArgument("sim request: params.channels=" + std::to_string(r.params.channels) +
                          " must be >= 0 (0 = the model's choice)");
  }
  // Node-aware algorithms (tree, hierarchical) follow the topology's nodes unless told otherwise.
  const detail::TopologyView view = detail::view_of(topology, r.spec.nranks);
  if (r.params.ranks_per_node == 0 && view.nodes > 1 && r.spec.nranks % view.ranks_per_node == 0) {
    r.params.ranks_per_node = view.ranks_per_node;
  }
  return r;
}

Prediction evaluate(const topo::Topology& topology, const detail::TopologyView& view,
                    const Resolved& r, Fidelity fidelity) {
  Prediction p;
  if (fidelity == Fidelity::flow) {
    p = detail::flow(topology, r, {}).prediction;
  } else if (const auto algo = detail::nccl_algo_for(r.algorithm, r.spec.kind)) {
    p = detail::analytic_nccl(view, r, *algo);
  } else {
    p = detail::analytic_alpha_beta(topology, r);
  }
  p.algorithm = r.algorithm;
  p.protocol = r.protocol;
  p.nranks = r.spec.nranks;
  p.fidelity = fidelity;
  detail::fill_bandwidths(p, r.spec, r.dtype);
  return p;
}

// Checks request.algorithm / protocol against what applies; throws naming what does.
void check_choice(const std::vector<Candidate>& cs, const Request& request, OpKind kind) {
  if (!request.algorithm.empty()) {
    const auto it = std::find_if(cs.begin(), cs.end(), [&](const Candidate& c) {
      return c.algorithm == request.algorithm;
    });
    if (it == cs.end()) {
      std::vector<std::string> all;
      for (const Candidate& c : cs) all.push_back(c.algorithm);
      throw InvalidArgument("sim request: algorithm '" + request.algorithm + "' does not exist for " +
                            std::string(twinccl::name(kind)) + "; these do: " + join(all));
    }
    if (!it->why_not.empty()) {
      throw InvalidArgument("sim request: algorithm '" + request.algorithm + "' does not apply to " +
                            std::string(twinccl::name(kind)) + ": " + it->why_not +
                            "; applicable: " + applicable_list(cs));
    }
    if (request.protocol) {
      const std::vector<Protocol> ps = protocols_applicable(request.algorithm, kind);
      if (std::find(ps.begin(), ps.end(), *request.protocol) == ps.end()) {
        throw InvalidArgument("sim request: protocol " + std::string(name(*request.protocol)) +
                              " does not apply to algorithm '" + request.algorithm + "' for " +
                              std::string(twinccl::name(kind)) + "; applicable: " +
                              protocol_list(ps));
      }
    }
  }
}

}  // namespace

namespace detail {
void fill_bandwidths(Prediction& p, const CollectiveSpec& spec, DataType dtype) {
  const double bytes = algbw_bytes(spec.kind, spec.count, dtype, spec.nranks);
  p.algbw_gbps = p.time_us > 0.0 ? bytes / (p.time_us * 1e-6) / 1e9 : 0.0;
  p.busbw_gbps = p.algbw_gbps * busbw_factor(spec.kind, spec.nranks);
}
}  // namespace detail

std::vector<Prediction> compare_all(const topo::Topology& topology, const Request& request) {
  Resolved base = resolve(topology, request);
  const detail::TopologyView view = detail::view_of(topology, base.spec.nranks);
  const std::vector<Candidate> cs = candidates(topology, view, base);
  if (cs.empty()) {
    throw InvalidArgument("sim request: no algorithm is registered for " +
                          std::string(twinccl::name(base.spec.kind)));
  }
  check_choice(cs, request, base.spec.kind);
  std::vector<Prediction> out;
  for (const Candidate& c : cs) {
    if (!c.why_not.empty()) continue;
    if (!request.algorithm.empty() && c.algorithm != request.algorithm) continue;
    for (Protocol p : protocols_applicable(c.algorithm, base.spec.kind)) {
      if (request.protocol && *request.protocol != p) continue;
      Resolved r = base;
      r.algorithm = c.algorithm;
      r.protocol = p;
      out.push_back(evaluate(topology, view, r, request.fidelity));
    }
  }
  if (out.empty()) {
    throw InvalidArgument("sim request: no applicable algorithm runs protocol " +
                          std::string(name(*request.protocol)) + " for " +
                          std::string(twinccl::name(base.spec.kind)) + " on '" + topology.name() +
                          "'; applicable algorithms: " + applicable_list(cs) +
                          " (LL/LL128 only with ring, and tree for all_reduce)");
  }
  std::stable_sort(out.begin(), out.end(), [](const Prediction& a, const Prediction& b) {
    return a.time_us < b.time_us;
  });
  return out;
}

Prediction predict(const topo::Topology& topology, const Request& request) {
  std::vector<Prediction> all = compare_all(topology, request);
  if (!request.algorithm.empty()) return all.front();
  // As NCCL chooses: the fastest of NCCL's own algorithms (ring, tree, nvls, nvls_tree, pat); the
  // what-if ones (direct, halving_doubling, bruck, hierarchical) only where none of NCCL's applies
  // (all_to_all, gather, scatter, send/recv: NCCL runs them as grouped send/recv).
  const int nranks = all.front().nranks;
  const detail::TopologyView view = detail::view_of(topology, nranks);
  const OpKind kind = request.spec.kind;
  const auto nccl_choice = [&](const Prediction& p) {
    if (!detail::nccl_algo_for(p.algorithm, kind)) return false;
    // NCCL runs PAT with one GPU per node only.
    return p.algorithm != "pat" || view.ranks_per_node == 1;
  };
  const auto it = std::find_if(all.begin(), all.end(), nccl_choice);
  return it != all.end() ? *it : all.front();
}

FlowReport simulate_flow(const topo::Topology& topology, const Request& request,
                         const FlowOptions& options) {
  if (request.algorithm.empty()) {
    throw InvalidArgument("simulate_flow: request.algorithm must be set (use predict() to choose)");
  }
  Resolved r = resolve(topology, request);
  const std::vector<Candidate> cs =
      candidates(topology, detail::view_of(topology, r.spec.nranks), r);
  check_choice(cs, request, r.spec.kind);
  r.protocol = request.protocol.value_or(Protocol::simple);
  FlowReport report = detail::flow(topology, r, options);
  report.prediction.algorithm = r.algorithm;
  report.prediction.protocol = r.protocol;
  report.prediction.nranks = r.spec.nranks;
  report.prediction.fidelity = Fidelity::flow;
  detail::fill_bandwidths(report.prediction, r.spec, r.dtype);
  return report;
}

std::vector<Protocol> protocols_for(std::string_view algorithm) {
  if (algorithm == "ring" || algorithm == "tree") {
    return {Protocol::ll, Protocol::ll128, Protocol::simple};
  }
  return {Protocol::simple};
}

std::string_view name(Protocol protocol) {
  switch (protocol) {
    case Protocol::ll: return "LL";
    case Protocol::ll128: return "LL128";
    case Protocol::simple: return "Simple";
  }
  return "invalid";
}

std::string_view name(Fidelity fidelity) {
  return fidelity == Fidelity::flow ? "flow" : "analytic";
}

Protocol parse_protocol(std::string_view text) {
  const std::string t = lower(text);
  if (t == "ll") return Protocol::ll;
  if (t == "ll128") return Protocol::ll128;
  if (t == "simple") return Protocol::simple;
  throw InvalidArgument("unknown protocol '" + std::string(text) + "'; accepted: LL, LL128, Simple");
}

Fidelity parse_fidelity(std::string_view text) {
  const std::string t = lower(text);
  if (t == "analytic") return Fidelity::analytic;
  if (t == "flow") return Fidelity::flow;
  throw InvalidArgument("unknown fidelity '" + std::string(text) + "'; accepted: analytic, flow");
}

}  // namespace twinccl::sim
