// --algo / --proto of the simulator's predictions (perf --backend sim, whatif) in NCCL's own
// syntax: a value that is one twinccl name forces it, as before; any other value is read as the
// NCCL_ALGO / NCCL_PROTO environment variable (sim/nccl_env_choice.h: comma lists, NCCL's names
// without case, '^' = all but, "allreduce:tree;..." per collective) and restricts NCCL's ranking.
//
//   NcclListFlags lists = take_nccl_lists(o.algorithm, o.protocol,
//                                         sim::selectable_algorithms(true), {OpKind::all_reduce});
//   // --algo '^NVLS' --proto Simple: lists.algo "^NVLS", o.algorithm "" ; o.protocol "Simple"
//   sim::Request r = ...;  restrict_request(r, lists);  // r.allowed_algorithms {tree, ring, ...}
//   report.header_lines.push_back(lists.note());  // "NCCL_ALGO=^NVLS (from --algo): ..."
//
// The one ambiguous value: a single NCCL name. `--algo Ring` (NCCL_ALGO=Ring) leaves NCCL one
// algorithm, which it runs with the protocol it ranks first: the same prediction as `--algo ring`.
// `--proto Simple` is twinccl's own protocol name and forces Simple as before; NCCL_PROTO=Simple
// ranks the same pairs on every NVIDIA machine; `--proto simple` (NCCL's spelling in AWS's
// images) is read as NCCL_PROTO and also keeps RCCL's own exclusions (no tree/Simple in one
// MI300X node, no LL128 on gfx942), which a forced Simple does not.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "twinccl/errors.h"
#include "twinccl/operation.h"
#include "twinccl/sim/timing.h"
#include "twinccl/sim/tuner.h"

namespace twinccl::cli {

struct NcclListFlags {
  std::string algo;   // --algo's value in NCCL_ALGO syntax; "" = none (or a forced twinccl name)
  std::string proto;  // --proto's value in NCCL_PROTO syntax; "" = none (or a forced protocol)
  std::string algo_flag = "--algo", proto_flag = "--proto";
  bool any() const { return !algo.empty() || !proto.empty(); }
  // "--proto 'll128' (NCCL_PROTO=ll128)": what an error under the lists starts with.
  std::string named() const;
  // "NCCL_ALGO=^NVLS (from --algo), NCCL_PROTO=^LL128 (from --proto): NCCL's choice among what
  // they allow, as with these variables set"; "" when none. Ends "(restricts nothing for
  // all_reduce)" for those of `collectives` the lists leave every pair ("^", "allgather:ring").
  std::string note(const std::vector<OpKind>& collectives = {}) const;
};

// Moves --algo / --proto values that are not one twinccl name (`twinccl_algorithms`; protocols:
// LL, LL128, Simple exactly) out of `algorithm` / `protocol` into the lists, and reads the lists
// once for each of `collectives`, so that a bad value fails before anything runs: an unknown
// name, a list leaving no algorithm for a collective, CollNet. Throws InvalidArgument naming the
// option, the value and what is accepted.
NcclListFlags take_nccl_lists(std::string& algorithm, std::string& protocol,
                              const std::vector<std::string>& twinccl_algorithms,
                              const std::vector<OpKind>& collectives,
                              const std::string& algo_flag = "--algo",
                              const std::string& proto_flag = "--proto");

// A header line when the lists give NCCL_PROTO on a topology whose network's NCCL profile sets
// its own (sim::network_nccl_proto: GCP's TCPX / TCPXO, Simple): the lists' value replaces the
// profile's, as NCCL reads one value; "" otherwise. `label` names the topology.
//   "NCCL_PROTO=Simple,LL128 (from --proto) replaces the NCCL_PROTO=Simple that gcp-a3mega-2's
//    NCCL profile sets (GCP's TCPXO ...): NCCL reads one value, ..."
std::string profile_replaced_note(const NcclListFlags& lists, const topo::Topology& topology,
                                  const std::string& label);

// Applies the lists to a request for request.spec.kind as NCCL would with the variables set
// (sim::apply_nccl_lists, predict_logged's rule: one algorithm and at most one protocol = forced,
// else NCCL's ranking among the allowed). Collectives NCCL runs as send/recv (all_to_all, gather,
// scatter) ignore NCCL_ALGO / NCCL_PROTO as NCCL does: unchanged.
void restrict_request(sim::Request& request, const NcclListFlags& lists);

// `predict()` (a sim::predict call on a request restrict_request gave the lists): an
// InvalidArgument it throws while lists are in use (a list leaving no pair on this topology, one
// NCCL name that does not apply to the collective) gains lists.named() in front.
template <class Predict>
auto predicted_under(const NcclListFlags& lists, Predict&& predict) {
  if (!lists.any()) return predict();
  try {
    return predict();
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(lists.named() + ": " + e.what());
  }
}

// A trace replay forces one algorithm / protocol on every collective (sim::ReplayOptions): a
// twinccl name or one NCCL name ("Ring", "simple") as its twinccl name; "" stays "". A list
// ('^', ',', "allreduce:...") throws InvalidArgument saying it restricts sweeps only.
std::string forced_nccl_name(const std::string& value, const std::string& flag, bool algorithm);

// One stderr line when NCCL_ALGO / NCCL_PROTO are set in this process's environment and the
// matching option was not given: they are not applied to a prediction; "" when nothing to say.
// It suggests the option, shell-quoted, that means the variable: for a sweep the value itself, a
// protocol in lower case where its spelling is twinccl's forcing name (NCCL_PROTO=LL -> --proto
// 'll'); for a `replay` (which forces one name) a single name only, a list being refused there.
std::string unapplied_environment_note(const std::string& algorithm, const std::string& protocol,
                                       bool replay = false);

// A header line when `forced` (a request whose --algo / --proto gave twinccl's exact names) ran a
// pair NCCL's own choice never takes there (LL128 on MI300X, tree/Simple in one MI300X node):
// that pair given as NCCL_ALGO / NCCL_PROTO lists, as NCCL would rank it, leaves nothing; or a
// protocol the cloud's NCCL profile leaves out (LL on GCP's Simple profile), which a run sets
// NCCL_PROTO itself to take. `chosen` is the prediction made; "" when NCCL could choose it.
std::string forced_outside_nccl_note(const sim::Tuner& tuner, const sim::Request& forced,
                                     const sim::Prediction& chosen);
// Its second part alone, for a protocol forced by name beside an NCCL_ALGO list (--algo
// 'Ring,Tree' --proto LL): the protocol the cloud's NCCL profile leaves out; "" otherwise.
std::string forced_outside_profile_note(const sim::Tuner& tuner, const sim::Request& forced,
                                        const sim::Prediction& chosen);

// The lists a prediction was restricted to, whole (JSON strings: no character is lost or
// truncated), for machine-read output; both give nothing when neither is set:
// csv's first line "# nccl_algo=\"^NVLS,NVLSTree\",nccl_proto=null\n";
// json's "nccl_algo" / "nccl_proto" fields (null for the one not set).
std::string nccl_lists_csv_line(const std::string& algo, const std::string& proto);
void add_nccl_lists_json(nlohmann::json& j, const std::string& algo, const std::string& proto);

}  // namespace twinccl::cli
