// NCCL_ALGO / NCCL_PROTO of a logged run (nccl_env_choice.h).
//
// How it works: the value is read as NCCL's parseList reads it (NVIDIA/nccl v2.30.7-1
// src/graph/tuning.cc:36-127): ';' separates entries, the first may lack a "collective:" prefix
// and applies to every collective, a later prefixed one replaces the list of its collective; a
// prefix must be one of NCCL's collectives (src/init.cc:52; "Unrecognized prefix token" there);
// '^' turns a list into "all but these"; names compare without case only (strcasecmp: "Nvls-Tree"
// is refused as NCCL refuses it); empty entries, names and ':' pieces are skipped, as strtok_r
// skips them ("Ring," is Ring, "^" is all, "Ring:" is Ring), a third ':' piece is ignored. For
// example, for an all_reduce log, "Ring,Tree;allgather:Ring" -> {ring, tree}; "^NVLS,NVLSTree" ->
// {ring, tree, pat, ...}. twinccl's own names (nvls_tree) are accepted too. The prediction under a
// list ranks the allowed pairs with the tuner's ranking time, as NCCL's own ranking over its
// enabled table does.
#include "twinccl/sim/nccl_env_choice.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <optional>

#include "network_class.h"
#include "twinccl/call_site_text.h"
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

// NCCL's collectives, the prefixes of per-collective lists (src/init.cc:52, ncclFuncStr).
constexpr const char* kPrefixes[] = {"Broadcast", "Reduce", "AllGather", "ReduceScatter",
                                     "AllReduce"};

// Lower case without '_' and '-': maps twinccl's collective names ("all_reduce") to NCCL's
// prefixes ("AllReduce"); the user's names themselves compare as NCCL's strcasecmp does.
std::string folded(std::string_view s) {
  std::string out;
  for (const char c : s) {
    if (c == '_' || c == '-') continue;
    out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

bool same_ignoring_case(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// The pieces strtok_r gives: `s` cut at every `sep`, empty pieces dropped.
std::vector<std::string_view> pieces(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t begin = 0;
  while (begin <= s.size()) {
    const std::size_t end = std::min(s.find(sep, begin), s.size());
    if (end > begin) out.push_back(s.substr(begin, end - begin));
    begin = end + 1;
  }
  return out;
}

// The element list `value` gives `collective` (NCCL's parseList); nullopt = none applies to it.
// As strtok_r there: an entry's ':' pieces are the prefix and the list, empty ones dropped and any
// third one ignored ("Ring:" and ":Ring" are Ring, "allreduce::Ring" is allreduce's Ring); only an
// entry at the value's very start may lack a prefix (";Ring" and "Ring;allreduce:" are refused).
std::optional<std::string_view> list_for(std::string_view value, const std::string& collective,
                                         const std::string& variable, const std::string& where) {
  std::optional<std::string_view> list;
  for (const std::string_view entry : pieces(value, ';')) {
    const std::vector<std::string_view> parts = pieces(entry, ':');
    if (parts.empty()) {  // NCCL reads a null list here (a crash); refuse it
      throw ConfigError(fmt::format("{}: {}='{}': an entry of ':' alone names no list", where,
                                    variable, shown_value(value)));
    }
    if (parts.size() == 1) {
      if (entry.data() != value.data()) {
        throw ConfigError(fmt::format(
            "{}: {}='{}': every entry but the first needs a 'collective:' prefix and a list "
            "(NCCL refuses it too)",
            where, variable, shown_value(value)));
      }
      list = parts[0];
      continue;
    }
    if (std::none_of(std::begin(kPrefixes), std::end(kPrefixes),
                     [&](const char* p) { return same_ignoring_case(p, parts[0]); })) {
      throw ConfigError(fmt::format(
          "{}: {}='{}': unknown collective prefix '{}'; NCCL knows Broadcast, Reduce, AllGather, "
          "ReduceScatter, AllReduce (NCCL refuses it too)",
          where, variable, shown_value(value), shown_value(parts[0], 40)));
    }
    if (folded(parts[0]) == folded(collective)) list = parts[1];
  }
  return list;
}

// Which of `names` (NCCL's spellings; `also` twinccl's, or nullptr) `variable`'s value selects for
// the table's collective, by index (nullopt = the value names no list for it); "^" = all but.
struct Selection {
  std::vector<bool> named;
  bool all_but = false;
};
std::optional<Selection> selected(std::string_view value, const std::string& collective,
                                  const std::string& variable, const std::string& where,
                                  const std::vector<const char*>& names,
                                  const std::vector<const char*>& also) {
  const std::optional<std::string_view> list = list_for(value, collective, variable, where);
  if (!list) return std::nullopt;
  std::string_view items = *list;
  const bool all_but = !items.empty() && items.front() == '^';
  if (all_but) items.remove_prefix(1);
  std::vector<bool> named(names.size(), false);
  std::string known;
  for (const char* n : names) known += (known.empty() ? "" : ", ") + std::string(n);
  for (const std::string_view item : pieces(items, ',')) {
    // "Ring,,Tree", "^": NCCL's strtok_r skips empty names (pieces drops them)
    std::size_t k = 0;
    while (k < names.size() && !same_ignoring_case(names[k], item) &&
           !(k < also.size() && also[k] && same_ignoring_case(also[k], item)))
      ++k;
    if (k == names.size()) {
      // the value once: "NCCL_ALGO: unknown algorithm 'foo'" when it is that one name
      const std::string given =
          item == value ? variable : fmt::format("{}='{}'", variable, shown_value(value));
      throw ConfigError(fmt::format("{}: {}: unknown {} '{}'; NCCL knows {}", where, given,
                                    variable == "NCCL_ALGO" ? "algorithm" : "protocol",
                                    shown_value(item, 40), known));
    }
    named[k] = true;
  }
  for (std::size_t k = 0; k < named.size(); ++k) named[k] = named[k] != all_but;
  if (std::none_of(named.begin(), named.end(), [](bool b) { return b; })) {
    throw ConfigError(fmt::format("{}: {}='{}' leaves none for {}; NCCL knows {}", where, variable,
                                  shown_value(value), collective, known));
  }
  return Selection{std::move(named), all_but};
}

}  // namespace

std::vector<std::string> nccl_algo_list(std::string_view value, const std::string& collective,
                                        const std::string& where) {
  std::vector<const char*> nccl, ours;
  for (const AlgoName& a : kAlgos) nccl.push_back(a.nccl), ours.push_back(a.ours);
  const auto sel = selected(value, collective, "NCCL_ALGO", where, nccl, ours);
  std::vector<std::string> out;
  for (std::size_t i = 0; sel && i < sel->named.size(); ++i) {
    if (!sel->named[i]) continue;
    if (ours[i] == nullptr) {
      if (sel->all_but) continue;  // "all but ...": CollNet needs a CollNet network; leave it out
      throw ConfigError(fmt::format(
          "{}: NCCL_ALGO='{}' allows {}, which the model has no cost for (CollNet needs "
          "SHARP-capable switches); compare logs measured without it",
          where, shown_value(value), nccl[i]));
    }
    out.emplace_back(ours[i]);
  }
  if (sel && out.empty()) {
    throw ConfigError(fmt::format("{}: NCCL_ALGO='{}' leaves no algorithm for {}; NCCL knows {}",
                                  where, shown_value(value), collective, fmt::join(nccl, ", ")));
  }
  return out;
}

std::vector<Protocol> nccl_proto_list(std::string_view value, const std::string& collective,
                                      const std::string& where) {
  const Protocol all[] = {Protocol::ll, Protocol::ll128, Protocol::simple};
  const auto sel = selected(value, collective, "NCCL_PROTO", where, {"LL", "LL128", "Simple"}, {});
  std::vector<Protocol> out;
  for (std::size_t i = 0; sel && i < sel->named.size(); ++i)
    if (sel->named[i]) out.push_back(all[i]);
  return out;
}

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
    c.algorithms = nccl_algo_list(table.nccl_algo, table.collective, where);
    from.push_back(
        fmt::format("NCCL_ALGO={} ({})", shown_value(table.nccl_algo), table.nccl_algo_from));
  }
  if (!table.nccl_proto.empty()) {
    const std::string where = fmt::format("{} ({})", table.source, table.nccl_proto_from);
    c.protocols = nccl_proto_list(table.nccl_proto, table.collective, where);
    c.nccl_proto_set = true;
    from.push_back(
        fmt::format("NCCL_PROTO={} ({})", shown_value(table.nccl_proto), table.nccl_proto_from));
  }
  for (const std::string& f : from) c.from += (c.from.empty() ? "" : ", ") + f;
  return c;
}

bool nccl_tunes(OpKind kind) {
  const std::string ours = folded(name(kind));
  return std::any_of(std::begin(kPrefixes), std::end(kPrefixes),
                     [&](const char* p) { return folded(p) == ours; });
}

NetworkNcclProto network_nccl_proto(const topo::Topology& topology) {
  const detail::NetworkTerms terms = detail::network_terms(topology.facts().network);
  return {terms.nccl_proto, terms.nccl_proto_profile};
}

void apply_nccl_lists(Request& r, const std::vector<std::string>& algorithms,
                      const std::vector<Protocol>& protocols, bool nccl_proto_set) {
  r.nccl_proto_set = r.nccl_proto_set || nccl_proto_set;
  if (r.algorithm.empty() && algorithms.size() == 1 && (r.protocol || protocols.size() <= 1)) {
    r.algorithm = algorithms.front();
    if (!r.protocol && protocols.size() == 1) r.protocol = protocols.front();
    return;
  }
  // Several allowed: NCCL ranks those alone (the others' table entries are disabled), as the
  // tuner does with the lists (TunerCall::allowed_*: PAT only with one GPU per node there too).
  if (r.algorithm.empty()) r.allowed_algorithms = algorithms;
  if (!r.protocol) r.allowed_protocols = protocols;
}

Prediction predict_logged(const topo::Topology& topology, const Request& request,
                          const LoggedChoice& choice, std::string_view source) {
  if (!choice.restricted() && !choice.nccl_proto_set) return predict(topology, request);
  Request r = request;
  try {
    apply_nccl_lists(r, choice.algorithms, choice.protocols, choice.nccl_proto_set);
    return predict(topology, r);
  } catch (const InvalidArgument& e) {
    throw ConfigError(fmt::format("{}: cannot predict with {} ({}) on '{}': {}", source,
                                  choice.label(), choice.from, topology.name(), e.what()));
  }
}

}  // namespace twinccl::sim
