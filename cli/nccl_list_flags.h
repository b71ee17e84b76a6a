// --algo / --proto of the simulator's predictions (perf --backend sim, whatif) in NCCL's own
// syntax: a value that is one twinccl name forces it, as before; any other value is read as the
// NCCL_ALGO / NCCL_PROTO environment variable (sim/nccl_env_choice.h: comma lists, NCCL's names
// without case, '^' = all but, "allreduce:tree;..." per collective) and restricts NCCL's ranking.
//
//   NcclListFlags lists = take_nccl_lists(o.algorithm, o.protocol, "--algo", "--proto");
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

#include <string>
#include <vector>

#include "twinccl/operation.h"
#include "twinccl/sim/timing.h"

namespace twinccl::cli {

struct NcclListFlags {
  std::string algo;   // --algo's value in NCCL_ALGO syntax; "" = none (or a forced twinccl name)
  std::string proto;  // --proto's value in NCCL_PROTO syntax; "" = none (or a forced protocol)
  std::string algo_flag = "--algo", proto_flag = "--proto";
  bool any() const { return !algo.empty() || !proto.empty(); }
  // "NCCL_ALGO=^NVLS (from --algo), NCCL_PROTO=^LL128 (from --proto): NCCL's choice among what
  // they allow, as with these variables set"; "" when none.
  std::string note() const;
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

// Applies the lists to a request for request.spec.kind as NCCL would with the variables set
// (sim::predict_logged's rule: one algorithm and at most one protocol left = that pair forced,
// else NCCL's ranking among the allowed). Collectives NCCL runs as send/recv (all_to_all, gather,
// scatter) ignore NCCL_ALGO / NCCL_PROTO as NCCL does: unchanged.
void restrict_request(sim::Request& request, const NcclListFlags& lists);

// A trace replay forces one algorithm / protocol on every collective (sim::ReplayOptions): a
// twinccl name or one NCCL name ("Ring", "simple") as its twinccl name; "" stays "". A list
// ('^', ',', "allreduce:...") throws InvalidArgument saying it restricts sweeps only.
std::string forced_nccl_name(const std::string& value, const std::string& flag, bool algorithm);

// One stderr line when NCCL_ALGO / NCCL_PROTO are set in this process's environment and the
// matching option was not given: they are not applied to a prediction; "" when nothing to say.
std::string unapplied_environment_note(const std::string& algorithm, const std::string& protocol);

}  // namespace twinccl::cli
