// Tuner::ranked (tuner.h): every (algorithm, protocol) a call may run, in NCCL's order.
//
// How it works. A forced algorithm / protocol is checked against what exists and applies (an
// error lists what does). Then each applicable algorithm's protocols are timed (Tuner::time) and
// sorted by NCCL's ranking time, the time on all the communicator's channels; a pair is left
// out where a forced name, an NCCL_ALGO / NCCL_PROTO list, RCCL's own tuning (no LL128 on MI300X,
// no tree/Simple in one node) or a cloud profile's NCCL_PROTO excludes it. When the lists leave
// nothing, the error says why pairs were left out and how to force one (left_out_text).
// Example, 16 GPUs of gcp-a3mega-2, 32 KiB all_reduce: the cloud profile's NCCL_PROTO=Simple
// leaves the Simple pairs alone (tree/Simple first of NCCL's own); with the run's own NCCL_PROTO
// set, even to "^", tree/LL ranks first.
#include <algorithm>

#include "model.h"
#include "tuner_internal.h"
#include "twinccl/errors.h"
#include "twinccl/sim/nccl_env_choice.h"
#include "twinccl/sim/tuner.h"

namespace twinccl::sim {
namespace {

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& i : items) out += (out.empty() ? "" : ", ") + i;
  return out.empty() ? "(none)" : out;
}

std::string protocol_list(const std::vector<Protocol>& ps) {
  std::vector<std::string> names;
  for (Protocol p : ps) names.emplace_back(name(p));
  return join(names);
}

// Why NCCL's own choice left pairs out of a restricted ranking, and how to run them anyway.
// `profile_proto`: the cloud profile's NCCL_PROTO where it left pairs out, else "".
std::string left_out_text(bool no_ll128, bool rccl_skips, const std::string& profile_proto) {
  std::vector<std::string> why;
  if (no_ll128) why.push_back("RCCL has no LL128 on gfx942 (MI300X)");
  if (rccl_skips)
    why.push_back(
        "RCCL's tuning table does not choose some pairs here (tree/Simple within one MI300X node)");
  if (!profile_proto.empty()) {
    why.push_back("this cloud's NCCL profile sets NCCL_PROTO=" + profile_proto +
                  " (an NCCL_PROTO list of your own, --proto 'Simple,LL128', replaces it)");
  }
  if (why.empty()) return "";
  return "; NCCL's own choice leaves pairs out: " + join(why) +
         "; a pair forced by twinccl's exact names still runs (--proto LL128, --proto LL, --algo "
         "tree --proto Simple)";
}

}  // namespace

std::vector<Choice> Tuner::applicable(const TunerCall& call) const { return ranked(call, false); }

std::vector<Choice> Tuner::ranked(const TunerCall& call, bool nccl_only) const {
  const CollectiveSpec spec = settled(call.spec);
  const std::string kind(twinccl::name(spec.kind));
  if (!is_valid(call.dtype)) {
    throw InvalidArgument("tuner: dtype " + std::to_string(static_cast<int>(call.dtype)) +
                          " is not a DataType");
  }
  if (call.channels < 0) {
    throw InvalidArgument("tuner: channels=" + std::to_string(call.channels) +
                          " must be >= 0 (0 = the model's choice)");
  }
  const auto cs = candidates(spec);
  if (cs.empty()) throw InvalidArgument("tuner: no algorithm is registered for " + kind);
  std::vector<std::string> all, ok;
  for (const auto& [a, why] : cs) {
    all.push_back(a);
    if (why.empty()) ok.push_back(a);
  }
  if (!call.algorithm.empty()) {
    const auto it = std::find_if(cs.begin(), cs.end(),
                                 [&](const auto& c) { return c.first == call.algorithm; });
    if (it == cs.end()) {
      throw InvalidArgument("algorithm '" + call.algorithm + "' does not exist for " + kind +
                            "; these do: " + join(all));
    }
    if (!it->second.empty()) {
      throw InvalidArgument("algorithm '" + call.algorithm + "' does not apply to " + kind +
                            " on " + std::to_string(spec.nranks) + " ranks of '" +
                            topology_.name() + "': " + it->second + "; applicable: " + join(ok));
    }
    if (call.protocol) {
      const std::vector<Protocol> ps = detail::protocols_applicable(call.algorithm, spec.kind);
      if (std::find(ps.begin(), ps.end(), *call.protocol) == ps.end()) {
        throw InvalidArgument("protocol " + std::string(name(*call.protocol)) +
                              " does not apply to algorithm '" + call.algorithm + "' for " + kind +
                              "; applicable: " + protocol_list(ps));
      }
    }
  }
  std::vector<std::pair<double, Choice>> ranked;  // (NCCL's ranking time, the choice)
  bool no_ll128 = false, rccl_skips = false, by_profile = false;  // why pairs were left out
  // The cloud's NCCL_PROTO (GCP's profiles: Simple) unless a protocol is forced by name or the run
  // sets NCCL_PROTO itself: NCCL reads one value, the run's where set after the profile.
  const NetworkNcclProto profile = network_nccl_proto(topology_);
  const bool profile_ranks = !call.protocol && profile.applies(call.nccl_proto_set);
  const std::vector<Protocol> profile_allows =
      profile_ranks ? nccl_proto_list(profile.value, kind, profile.profile)
                    : std::vector<Protocol>{};
  const auto allowed = [](const auto& list, const auto& x) {
    return list.empty() || std::find(list.begin(), list.end(), x) != list.end();
  };
  for (const std::string& a : ok) {
    if (!call.algorithm.empty() && a != call.algorithm) continue;
    if (call.algorithm.empty() && !allowed(call.allowed_algorithms, a)) continue;
    const auto nccl_algo = detail::nccl_algo_for(a, spec.kind);
    if (nccl_only && !nccl_algo) continue;
    for (Protocol p : detail::protocols_applicable(a, spec.kind)) {
      if (call.protocol && *call.protocol != p) continue;
      if (!call.protocol && !allowed(call.allowed_protocols, p)) continue;
      // RCCL never takes LL128 on MI300X nor tree/Simple in one node by itself; forced, it runs.
      if (!call.protocol && nccl_algo && !detail::rccl_chooses(*view_, *nccl_algo, p)) {
        (p == Protocol::ll128 && view_->arch == topo::GpuArch::cdna3 ? no_ll128 : rccl_skips) =
            true;
        continue;
      }
      if (profile_ranks && !allowed(profile_allows, p)) {
        by_profile = true;
        continue;
      }
      double rank_us = 0.0;
      Choice c = time(spec, call.dtype, a, p, call.channels, rank_us);
      ranked.emplace_back(rank_us, std::move(c));
    }
  }
  if (ranked.empty() && nccl_only) return {};
  if (ranked.empty() && call.restricted()) {
    throw InvalidArgument("the NCCL_ALGO / NCCL_PROTO lists leave no pair for " + kind + " on " +
                          std::to_string(spec.nranks) + " ranks of '" + topology_.name() +
                          "'; applicable algorithms: " + join(ok) +
                          left_out_text(no_ll128, rccl_skips, by_profile ? profile.value : ""));
  }
  if (ranked.empty()) {
    throw InvalidArgument("no applicable algorithm runs protocol " +
                          std::string(name(*call.protocol)) + " for " + kind + " on '" +
                          topology_.name() + "'; applicable algorithms: " + join(ok) +
                          " (LL/LL128 only with ring, and tree for all_reduce)");
  }
  std::stable_sort(ranked.begin(), ranked.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Choice> out;
  for (auto& [rank_us, c] : ranked) out.push_back(std::move(c));
  return out;
}

}  // namespace twinccl::sim
