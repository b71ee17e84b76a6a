// NCCL_ALGO / NCCL_PROTO of a logged run (nccl_env_choice.h).
//
// How it works: the value is read as NCCL's parseList reads it (NVIDIA/nccl v2.30.7-1
// src/graph/tuning.cc:36-110): ';' separates entries, the first may lack a "collective:" prefix
// and applies to every collective, a later prefixed one replaces the list of its collective; '^'
// turns a list into "all but these"; names compare without case. For example, for an all_reduce
// log, "Ring,Tree;allgather:Ring" -> {ring, tree}; "^NVLS,NVLSTree" -> {ring, tree, pat, ...}.
// twinccl's own names (nvls_tree) are accepted too. The prediction under a list ranks the allowed
// pairs with the tuner's ranking time, as NCCL's own ranking over its enabled table does.
#include "twinccl/sim/nccl_env_choice.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>

#include "twinccl/errors.h"

namespace twinccl::sim {
namespace {

// NCCL's names (src/init.cc:54, ncclAlgoStr) with twinccl's; CollNet has no model here.
struct AlgoName {
  const char* nccl;
  const char* ours;  // nullptr: not modelled
};
constexpr AlgoName kAlgos[] = {{"Tree", "tree"},
                               {"Ring", "ring"},
                               {"CollNetDirect", nullptr},
                               {"CollNetChain", nullptr},
                               {"NVLS", "nvls"},
                               {"NVLSTree", "nvls_tree"},
                               {"PAT", "pat"}};
constexpr const char* kProtos[] = {"LL", "LL128", "Simple"};

// Lower case without '_' and '-': "NVLSTree", "nvls_tree" and "nvls-tree" alike; "AllReduce" and
// "all_reduce" alike.
std::string folded(std::string_view s) {
  std::string out;
  for (const char c : s) {
    if (c == '_' || c == '-' || c == ' ') continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

std::vector<std::string_view> split_at(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t begin = 0;
  while (true) {
    const std::size_t end = s.find(sep, begin);
    out.push_back(s.substr(begin, end == std::string_view::npos ? s.npos : end - begin));
    if (end == std::string_view::npos) return out;
    begin = end + 1;
  }
}

// The element list `value` gives `collective` (NCCL's parseList); nullopt = none applies to it.
std::optional<std::string_view> list_for(std::string_view value, const std::string& collective,
                                         const std::string& variable, const std::string& where) {
  std::optional<std::string_view> list;
  const std::vector<std::string_view> entries = split_at(value, ';');
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::size_t colon = entries[i].find(':');
    if (colon == std::string_view::npos) {
      if (i != 0) {
        throw ConfigError(fmt::format(
            "{}: {}='{}': every entry but the first needs a 'collective:' prefix (NCCL refuses "
            "it too)",
            where, variable, value));
      }
      list = entries[i];
    } else if (folded(entries[i].substr(0, colon)) == folded(collective)) {
      list = entries[i].substr(colon + 1);
    }
  }
  return list;
}

std::string accepted_algorithms() {
  std::string out;
  for (const AlgoName& a : kAlgos) out += fmt::format("{}{}", out.empty() ? "" : ", ", a.nccl);
  return out;
}

std::vector<std::string> parse_algorithms(std::string_view value, const NcclTestsTable& t,
                                          const std::string& where) {
  const std::optional<std::string_view> list = list_for(value, t.collective, "NCCL_ALGO", where);
  if (!list) return {};
  std::string_view names = *list;
  const bool all_but = !names.empty() && names.front() == '^';
  if (all_but) names.remove_prefix(1);
  std::vector<bool> named(std::size(kAlgos), false);
  for (const std::string_view name : split_at(names, ',')) {
    const auto it = std::find_if(std::begin(kAlgos), std::end(kAlgos), [&](const AlgoName& a) {
      return folded(a.nccl) == folded(name) || (a.ours && folded(a.ours) == folded(name));
    });
    if (it == std::end(kAlgos)) {
      throw ConfigError(fmt::format("{}: NCCL_ALGO='{}': unknown algorithm '{}'; NCCL knows {}",
                                    where, value, name, accepted_algorithms()));
    }
    named[static_cast<std::size_t>(it - std::begin(kAlgos))] = true;
  }
  std::vector<std::string> out;
  for (std::size_t i = 0; i < named.size(); ++i) {
    if (named[i] == all_but) continue;
    if (kAlgos[i].ours == nullptr) {
      if (all_but) continue;  // "all but ...": CollNet needs a CollNet network; leave it out
      throw ConfigError(fmt::format(
          "{}: NCCL_ALGO='{}' allows {}, which the model has no cost for (CollNet needs "
          "SHARP-capable switches); compare logs measured without it",
          where, value, kAlgos[i].nccl));
    }
    out.emplace_back(kAlgos[i].ours);
  }
  if (out.empty()) {
    throw ConfigError(fmt::format("{}: NCCL_ALGO='{}' leaves no algorithm for {}; NCCL knows {}",
                                  where, value, t.collective, accepted_algorithms()));
  }
  return out;
}

std::vector<Protocol> parse_protocols(std::string_view value, const NcclTestsTable& t,
                                      const std::string& where) {
  const std::optional<std::string_view> list = list_for(value, t.collective, "NCCL_PROTO", where);
  if (!list) return {};
  std::string_view names = *list;
  const bool all_but = !names.empty() && names.front() == '^';
  if (all_but) names.remove_prefix(1);
  std::vector<bool> named(std::size(kProtos), false);
  for (const std::string_view name : split_at(names, ',')) {
    const auto it = std::find_if(std::begin(kProtos), std::end(kProtos),
                                 [&](const char* p) { return folded(p) == folded(name); });
    if (it == std::end(kProtos)) {
      throw ConfigError(
          fmt::format("{}: NCCL_PROTO='{}': unknown protocol '{}'; NCCL knows LL, LL128, Simple",
                      where, value, name));
    }
    named[static_cast<std::size_t>(it - std::begin(kProtos))] = true;
  }
  std::vector<Protocol> out;
  const Protocol all[] = {Protocol::ll, Protocol::ll128, Protocol::simple};
  for (std::size_t i = 0; i < named.size(); ++i)
    if (named[i] != all_but) out.push_back(all[i]);
  if (out.empty()) {
    throw ConfigError(
        fmt::format("{}: NCCL_PROTO='{}' leaves no protocol for {}", where, value, t.collective));
  }
  return out;
}

}  // namespace

std::string LoggedChoice::label() const {
  if (!restricted()) return "NCCL's choice";
  std::string algos, protos;
  for (const std::string& a : algorithms) algos += (algos.empty() ? "" : "|") + a;
  for (const Protocol p : protocols) protos += (protos.empty() ? "" : "|") + std::string(name(p));
  const bool several = algorithms.size() > 1 || protocols.size() > 1 || algorithms.empty();
  return fmt::format("{}{}{}{}", algos.empty() ? "any" : algos, protos.empty() ? "" : "/", protos,
                     several ? " (NCCL chooses among them)" : "");
}

LoggedChoice logged_choice(const NcclTestsTable& table) {
  LoggedChoice c;
  std::vector<std::string> from;
  if (!table.nccl_algo.empty()) {
    const std::string where = fmt::format("{} ({})", table.source, table.nccl_algo_from);
    c.algorithms = parse_algorithms(table.nccl_algo, table, where);
    from.push_back(fmt::format("NCCL_ALGO={} ({})", table.nccl_algo, table.nccl_algo_from));
  }
  if (!table.nccl_proto.empty()) {
    const std::string where = fmt::format("{} ({})", table.source, table.nccl_proto_from);
    c.protocols = parse_protocols(table.nccl_proto, table, where);
    from.push_back(fmt::format("NCCL_PROTO={} ({})", table.nccl_proto, table.nccl_proto_from));
  }
  for (const std::string& f : from) c.from += (c.from.empty() ? "" : ", ") + f;
  return c;
}

Prediction predict_logged(const topo::Topology& topology, const Request& request,
                          const LoggedChoice& choice, std::string_view source) {
  if (!choice.restricted()) return predict(topology, request);
  Request r = request;
  try {
    if (choice.algorithms.size() == 1 && choice.protocols.size() <= 1) {
      r.algorithm = choice.algorithms.front();
      if (choice.protocols.size() == 1) r.protocol = choice.protocols.front();
      return predict(topology, r);
    }
    // Several allowed: NCCL ranks those alone (the others' table entries are disabled), each
    // timed forced (its protocols); PAT only with one GPU per node, as NCCL enables it.
    static const std::vector<std::string> kNccl = {"ring", "tree", "nvls", "nvls_tree", "pat"};
    const std::vector<std::string>& algos = choice.algorithms.empty() ? kNccl : choice.algorithms;
    const int nranks = request.spec.nranks > 0 ? request.spec.nranks : topology.gpu_count();
    int first_node_ranks = 0;
    for (int g = 0; g < nranks && g < topology.gpu_count(); ++g) {
      first_node_ranks +=
          topology.vertex(topology.gpu(g)).node == topology.vertex(topology.gpu(0)).node;
    }
    std::optional<Prediction> best;
    for (const std::string& a : algos) {
      if (a == "pat" && algos.size() > 1 && first_node_ranks > 1) continue;
      r.algorithm = a;
      std::vector<Prediction> pairs;
      try {
        pairs = compare_all(topology, r);
      } catch (const InvalidArgument&) {
        continue;  // not for this collective or these ranks: NCCL ranks the others
      }
      for (const Prediction& p : pairs) {
        const bool proto_ok =
            choice.protocols.empty() || std::find(choice.protocols.begin(), choice.protocols.end(),
                                                  p.protocol) != choice.protocols.end();
        if (proto_ok && (!best || p.rank_us < best->rank_us)) best = p;
      }
    }
    if (!best) {
      throw InvalidArgument(fmt::format("none of {} applies to {} on {} ranks", choice.label(),
                                        twinccl::name(request.spec.kind), request.spec.nranks));
    }
    r.algorithm = best->algorithm;
    r.protocol = best->protocol;
    return predict(topology, r);
  } catch (const InvalidArgument& e) {
    throw ConfigError(fmt::format("{}: cannot predict with {} ({}) on '{}': {}", source,
                                  choice.label(), choice.from, topology.name(), e.what()));
  }
}

}  // namespace twinccl::sim
