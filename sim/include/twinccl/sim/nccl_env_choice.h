// The algorithm and protocol an nccl-tests run was restricted to (NCCL_ALGO / NCCL_PROTO), as its
// log says or the user gives them, and the prediction of a row made with that restriction.
//
//   const sim::LoggedChoice choice = sim::logged_choice(table);  // "Ring" -> {ring}
//   sim::Prediction p = sim::predict_logged(topology, sim::request_of(table, row), choice);
//   // p.algorithm "ring" even where NCCL's own choice would be nvls_tree
//
// NCCL reads both variables in ncclTopoTuneModel (NVIDIA/nccl v2.30.7-1 src/graph/tuning.cc:453-
// 461, printing "NCCL_PROTO set by environment to %s" / "NCCL_ALGO set by environment to %s" with
// NCCL_DEBUG=INFO) and parses them with parseList (tuning.cc:36-56): comma-separated names
// compared without case (src/init.cc:54: Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree,
// PAT; LL, LL128, Simple), '^' for "all but", and per-collective lists "allreduce:tree;...". A list
// of several lets NCCL choose among them: predict_logged ranks those alone, as NCCL then does.
// Every problem is a twinccl::ConfigError naming the log, the value and what is accepted.
#pragma once

#include <string>
#include <vector>

#include "twinccl/sim/nccl_tests_log.h"
#include "twinccl/sim/timing.h"

namespace twinccl::sim {

struct LoggedChoice {
  std::vector<std::string>
      algorithms;                   // twinccl names (ring, tree, nvls, nvls_tree, pat); {} = all
  std::vector<Protocol> protocols;  // {} = all
  // NCCL_PROTO is set at all ("^" and "allgather:ll128" for all_reduce too): it replaces a cloud
  // profile's NCCL_PROTO (NetworkNcclProto::applies) though it restricts nothing.
  bool nccl_proto_set = false;
  std::string from;  // "NCCL_ALGO=Ring (log line 12)" ...; "" = NCCL's own choice
  bool restricted() const { return !algorithms.empty() || !protocols.empty(); }
  // "NCCL's choice", "ring", "ring/Simple", "nvls|nvls_tree (NCCL chooses among them)".
  std::string label() const;
};

// The restriction a table's NCCL_ALGO / NCCL_PROTO give its collective (an "all but" list becomes
// the algorithms left). Throws ConfigError for an unknown name, a collective the value leaves no
// algorithm for, and CollNet (the model has no CollNet: measure without it).
LoggedChoice logged_choice(const NcclTestsTable& table);

// One variable's value read as logged_choice reads a log's, for `collective` (twinccl's name,
// "all_reduce", or NCCL's): the twinccl algorithms / protocols NCCL_ALGO=`value` /
// NCCL_PROTO=`value` leave it ({} = the value names no list for it: all). Every ConfigError
// message starts with `where` (a log line, or the command-line option that gave the value).
//   nccl_algo_list("^NVLS,NVLSTree", "all_reduce", "--algo")  // {tree, ring, pat}
std::vector<std::string> nccl_algo_list(std::string_view value, const std::string& collective,
                                        const std::string& where);
std::vector<Protocol> nccl_proto_list(std::string_view value, const std::string& collective,
                                      const std::string& where);

// Whether NCCL chooses an algorithm and protocol for `kind` (one of NCCL_ALGO's per-collective
// prefixes: all_reduce, all_gather, reduce_scatter, broadcast, reduce); the others run as
// send/recv, which NCCL_ALGO / NCCL_PROTO do not steer.
bool nccl_tunes(OpKind kind);

// The NCCL_PROTO the topology's network's own NCCL environment sets (GCP's TCPX / TCPXO
// profiles: "Simple"; sim/src/network_class.h cites them) and whose profile it is; value "" =
// none. The tuner ranks that value's protocols alone, unless the request forces a protocol or
// sets NCCL_PROTO itself (Request::nccl_proto_set, whatever it allows): NCCL reads one value, and
// the run's, set after the profile, replaces it.
//   network_nccl_proto(topo::load_topology("gcp-a3high-2"))  // {"Simple", "GCP's TCPX ..."}
struct NetworkNcclProto {
  std::string value, profile;
  // The one owner of "does the profile's NCCL_PROTO apply": the profile sets one and the run
  // sets no NCCL_PROTO of its own (`nccl_proto_set`). The tuner and the CLI's notes ask it.
  bool applies(bool nccl_proto_set) const { return !value.empty() && !nccl_proto_set; }
};
NetworkNcclProto network_nccl_proto(const topo::Topology& topology);

// Applies what NCCL_ALGO / NCCL_PROTO leave (`algorithms`, `protocols`; {} = all) to `request`
// as NCCL would: one algorithm and at most one protocol left (counting one forced in the request)
// = that pair forced; else NCCL's ranking among the allowed. What the request forces stays.
// `nccl_proto_set`: NCCL_PROTO was given (Request::nccl_proto_set), even one leaving all.
//   apply_nccl_lists(r, {"ring"}, {}, false);  // r.algorithm "ring"
void apply_nccl_lists(Request& request, const std::vector<std::string>& algorithms,
                      const std::vector<Protocol>& protocols, bool nccl_proto_set);

// The prediction of `request` (nothing forced in it) under `choice`: the tuner's choice where
// nothing is restricted; one algorithm and one protocol forced; otherwise the pair NCCL's ranking
// (Prediction::rank_us) puts first among the allowed ones. Throws ConfigError naming the log
// (`source`) when the choice cannot run the call.
Prediction predict_logged(const topo::Topology& topology, const Request& request,
                          const LoggedChoice& choice, std::string_view source = {});

}  // namespace twinccl::sim
