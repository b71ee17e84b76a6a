// --algo / --proto in NCCL_ALGO / NCCL_PROTO syntax (nccl_list_flags.h).
//
// How it works: a value that is exactly one of twinccl's names is left where it was (forced, as
// before); any other value moves to the lists and is read by the log readers' own parser
// (sim::nccl_algo_list / nccl_proto_list, NCCL's parseList rules) for each request's collective.
// The parser's ConfigError becomes an InvalidArgument that names the option and adds twinccl's
// names, the other accepted spelling.
#include "nccl_list_flags.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <tuple>
#include <utility>

#include "flag_values.h"
#include "twinccl/errors.h"
#include "twinccl/sim/nccl_env_choice.h"
#include "twinccl/sim/selection.h"
#include "twinccl/utf8_text.h"

namespace twinccl::cli {
namespace {

using sim::nccl_tunes;

constexpr sim::Protocol kProtocols[] = {sim::Protocol::ll, sim::Protocol::ll128,
                                        sim::Protocol::simple};

// twinccl's exact protocol names (sim::name: LL, LL128, Simple), which force.
bool is_protocol_name(const std::string& text) {
  return std::any_of(std::begin(kProtocols), std::end(kProtocols),
                     [&](sim::Protocol p) { return sim::name(p) == text; });
}

// Whether `value` is written as a list (',', '^', per-collective "allreduce:...;"), not one name.
bool list_syntax(const std::string& value) {
  return value.find_first_of(",^;:") != std::string::npos;
}

// "--algo 'Ring,Tree'": how every flag error begins (flag_values.h).
std::string as_typed(const std::string& flag, const std::string& value) {
  return fmt::format("{} '{}'", flag, shown(value));
}

struct Lists {
  std::vector<std::string> algorithms;
  std::vector<sim::Protocol> protocols;
};

Lists read_lists(const NcclListFlags& l, OpKind kind, const std::string& twinccl_names) {
  const std::string collective(name(kind));
  Lists out;
  try {
    if (!l.algo.empty())
      out.algorithms = sim::nccl_algo_list(l.algo, collective, as_typed(l.algo_flag, l.algo));
  } catch (const ConfigError& e) {
    throw InvalidArgument(fmt::format("{}{}", e.what(),
                                      twinccl_names.empty()
                                          ? std::string()
                                          : "; or one twinccl name to force it: " + twinccl_names));
  }
  try {
    if (!l.proto.empty())
      out.protocols = sim::nccl_proto_list(l.proto, collective, as_typed(l.proto_flag, l.proto));
  } catch (const ConfigError& e) {
    throw InvalidArgument(fmt::format("{}; or one of LL, LL128, Simple to force it", e.what()));
  }
  return out;
}

// Whether the lists leave `kind` fewer algorithms or protocols than NCCL's own choice has.
bool restricts(const NcclListFlags& l, OpKind kind) {
  const Lists lists = read_lists(l, kind, "");
  const std::size_t all_algorithms = sim::nccl_algo_list("^", "all_reduce", "").size();
  return (!lists.algorithms.empty() && lists.algorithms.size() < all_algorithms) ||
         (!lists.protocols.empty() && lists.protocols.size() < std::size(kProtocols));
}

}  // namespace

std::string NcclListFlags::note(const std::vector<OpKind>& collectives) const {
  // "--algo (or TWINCCL_ALGO)" -> "--algo"
  const auto option = [](const std::string& flag) { return flag.substr(0, flag.find(' ')); };
  std::string from;
  if (!algo.empty()) from = fmt::format("NCCL_ALGO={} (from {})", shown(algo), option(algo_flag));
  if (!proto.empty()) {
    from += fmt::format("{}NCCL_PROTO={} (from {})", from.empty() ? "" : ", ", shown(proto),
                        option(proto_flag));
  }
  if (from.empty()) return "";
  std::string idle;  // "^", "allgather:ring" for all_reduce: the collectives it leaves alone
  for (const OpKind k : collectives) {
    if (nccl_tunes(k) && !restricts(*this, k))
      idle += (idle.empty() ? "" : ", ") + std::string(name(k));
  }
  return from +
         ": NCCL's choice among what they allow, as with these variables set (the "
         "algorithm/protocol reported is the pair it took)" +
         (idle.empty() ? "" : " (restricts nothing for " + idle + ")");
}

std::string profile_replaced_note(const NcclListFlags& l, const topo::Topology& topology,
                                  const std::string& label) {
  const sim::NetworkNcclProto profile = sim::network_nccl_proto(topology);
  const bool set = !l.proto.empty();  // the run sets NCCL_PROTO, whatever it allows
  if (profile.value.empty() || profile.applies(set)) return "";
  // The same protocols as the profile's for every collective (--proto simple): nothing replaced.
  bool same = true;
  for (const OpKind k : {OpKind::all_reduce, OpKind::all_gather, OpKind::reduce_scatter,
                         OpKind::broadcast, OpKind::reduce}) {
    const std::string c(name(k));
    same =
        same && sim::nccl_proto_list(l.proto, c, "") == sim::nccl_proto_list(profile.value, c, "");
  }
  if (same) return "";
  return fmt::format(
      "NCCL_PROTO={} (from {}) replaces the NCCL_PROTO={} that {}'s NCCL profile sets ({}): NCCL "
      "reads one value, the one set last, so the protocols it allows are ranked",
      shown(l.proto), l.proto_flag.substr(0, l.proto_flag.find(" (")), profile.value, label,
      profile.profile);
}

std::string NcclListFlags::named() const {
  std::string out;
  if (!algo.empty()) out = fmt::format("{} (NCCL_ALGO={})", as_typed(algo_flag, algo), shown(algo));
  if (!proto.empty()) {
    out += fmt::format("{}{} (NCCL_PROTO={})", out.empty() ? "" : ", ", as_typed(proto_flag, proto),
                       shown(proto));
  }
  return out;
}

NcclListFlags take_nccl_lists(std::string& algorithm, std::string& protocol,
                              const std::vector<std::string>& twinccl_algorithms,
                              const std::vector<OpKind>& collectives, const std::string& algo_flag,
                              const std::string& proto_flag) {
  NcclListFlags l;
  l.algo_flag = algo_flag;
  l.proto_flag = proto_flag;
  const bool twinccl_algo =
      algorithm.empty() || std::find(twinccl_algorithms.begin(), twinccl_algorithms.end(),
                                     algorithm) != twinccl_algorithms.end();
  if (!twinccl_algo) l.algo = std::exchange(algorithm, "");
  if (!protocol.empty() && !is_protocol_name(protocol)) l.proto = std::exchange(protocol, "");
  for (const OpKind k : collectives) {
    if (nccl_tunes(k))
      (void)read_lists(l, k, fmt::format("{}", fmt::join(twinccl_algorithms, ", ")));
  }
  return l;
}

void restrict_request(sim::Request& r, const NcclListFlags& l) {
  if (!l.any() || !nccl_tunes(r.spec.kind)) return;
  const Lists lists = read_lists(l, r.spec.kind, "");
  sim::apply_nccl_lists(r, lists.algorithms, lists.protocols,  // predict_logged's rule
                        !l.proto.empty());
}

std::string forced_nccl_name(const std::string& value, const std::string& flag, bool algorithm) {
  const std::vector<std::string> names = sim::selectable_algorithms(true);
  if (value.empty() || (algorithm ? std::find(names.begin(), names.end(), value) != names.end()
                                  : is_protocol_name(value))) {
    return value;
  }
  if (!list_syntax(value)) {
    NcclListFlags l;
    (algorithm ? l.algo : l.proto) = value;
    (algorithm ? l.algo_flag : l.proto_flag) = flag;
    const Lists one = read_lists(l, OpKind::all_reduce,
                                 algorithm ? fmt::format("{}", fmt::join(names, ", ")) : "");
    if (algorithm && one.algorithms.size() == 1) return one.algorithms.front();
    if (!algorithm && one.protocols.size() == 1) return std::string(sim::name(one.protocols[0]));
  }
  throw InvalidArgument(fmt::format(
      "{} '{}': a replay forces one {} on every collective of the trace; NCCL_{} lists (',', '^', "
      "'allreduce:...') restrict a sweep's prediction only (perf --backend sim, whatif without "
      "--replay); give one name: {}",
      flag, shown(value), algorithm ? "algorithm" : "protocol", algorithm ? "ALGO" : "PROTO",
      algorithm ? fmt::format("{}", fmt::join(names, ", ")) : "LL, LL128, Simple"));
}

namespace {

// `value` as one shell word: '...' with each ' written '\''.
std::string shell_quoted(std::string_view value) {
  std::string out = "'";
  for (const char c : value) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// The option value that means NCCL_ALGO / NCCL_PROTO = `value` for a sweep: the value itself,
// except a protocol spelled as twinccl's exact name (LL, LL128, Simple), which --proto would force;
// its lower case is the same NCCL_PROTO value (NCCL compares without case) and is read as one.
std::string sweep_spelling(const std::string& value, bool algorithm) {
  if (algorithm || !is_protocol_name(value)) return value;
  std::string lower;
  for (const char c : value)
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower;
}

}  // namespace

std::string unapplied_environment_note(const std::string& algorithm, const std::string& protocol,
                                       bool replay) {
  std::string set, how, lists;
  for (const auto& [variable, given, flag, is_algo] :
       {std::tuple{"NCCL_ALGO", &algorithm, "--algo", true},
        std::tuple{"NCCL_PROTO", &protocol, "--proto", false}}) {
    const char* value = std::getenv(variable);
    if (value == nullptr || *value == '\0' || !given->empty()) continue;
    set += fmt::format("{}{}={}", set.empty() ? "" : " and ", variable, shown(value));
    const std::string v(value);
    if (replay && list_syntax(v)) {
      lists += fmt::format("{}{}", lists.empty() ? "" : " and ", variable);
      continue;
    }
    how += fmt::format("{}{} {}", how.empty() ? "" : " ", flag,
                       shell_quoted(replay ? v : sweep_spelling(v, is_algo)));
  }
  if (set.empty()) return "";
  const bool one = set.find(" and ") == std::string::npos;
  std::string advice;
  if (!how.empty()) advice = fmt::format("; to predict with {}, give {}", one ? "it" : "them", how);
  if (!lists.empty()) {
    advice += fmt::format(
        "; a replay forces one name on every collective and cannot apply the list in {} (perf "
        "--backend sim and whatif without --replay can)",
        lists);
  }
  return fmt::format(
      "twinccl: note: {} set in this environment {} NOT applied to the prediction (NCCL's own "
      "choice is predicted){}",
      set, one ? "is" : "are", advice);
}

std::string forced_outside_nccl_note(const sim::Tuner& tuner, const sim::Request& forced,
                                     const sim::Prediction& chosen) {
  if ((forced.algorithm.empty() && !forced.protocol) || !nccl_tunes(forced.spec.kind) ||
      !chosen.one_rank.empty())
    return "";
  try {  // halving_doubling, hierarchical ...: not NCCL's, NCCL_ALGO cannot name them
    (void)sim::nccl_algo_list(chosen.algorithm, std::string(name(forced.spec.kind)), "");
  } catch (const ConfigError&) {
    return "";
  }
  sim::Request listed = forced;  // the same pair as NCCL's lists: NCCL's exclusions apply
  listed.algorithm.clear();
  listed.protocol.reset();
  listed.allowed_algorithms = {chosen.algorithm};
  listed.allowed_protocols = {chosen.protocol};
  listed.nccl_proto_set = true;
  try {
    (void)sim::predict(tuner, listed);
  } catch (const InvalidArgument&) {
    return fmt::format(
        "{}/{} for {} is forced by twinccl's exact name{}: NCCL's own choice never takes it on "
        "this machine (NCCL_ALGO / NCCL_PROTO set to it would leave no pair)",
        chosen.algorithm, sim::name(chosen.protocol), name(forced.spec.kind),
        !forced.algorithm.empty() && forced.protocol ? "s" : "");
  }
  return forced_outside_profile_note(tuner, forced, chosen);
}

std::string forced_outside_profile_note(const sim::Tuner& tuner, const sim::Request& forced,
                                        const sim::Prediction& chosen) {
  // The cloud's profile sets NCCL_PROTO (GCP's: Simple): NCCL takes another protocol only where
  // the run sets NCCL_PROTO itself, replacing the profile's.
  if (!chosen.one_rank.empty() || !nccl_tunes(forced.spec.kind)) return "";
  const sim::NetworkNcclProto profile = sim::network_nccl_proto(tuner.topology());
  if (!forced.protocol || !profile.applies(forced.nccl_proto_set)) return "";
  const std::vector<sim::Protocol> allowed =
      sim::nccl_proto_list(profile.value, std::string(name(forced.spec.kind)), "");
  if (std::find(allowed.begin(), allowed.end(), chosen.protocol) != allowed.end()) return "";
  return fmt::format(
      "{}/{} for {} is forced by twinccl's exact name{}: this cloud's NCCL profile sets "
      "NCCL_PROTO={} ({}), under which NCCL never takes it; a run takes it with NCCL_PROTO set "
      "after the profile, replacing its value (as --proto '{}' predicts)",
      chosen.algorithm, sim::name(chosen.protocol), name(forced.spec.kind),
      !forced.algorithm.empty() && forced.protocol ? "s" : "", profile.value, profile.profile,
      sweep_spelling(std::string(sim::name(chosen.protocol)), false));
}

// "# nccl_algo=\"^NVLS\",nccl_proto=null": the lists a prediction was restricted to, whole (JSON
// strings: any character survives), first line of a CSV; nothing when none.
std::string nccl_lists_csv_line(const std::string& algo, const std::string& proto) {
  if (algo.empty() && proto.empty()) return "";
  const auto value = [](const std::string& v) {
    return v.empty() ? std::string("null") : json_dump(nlohmann::json(v));
  };
  return "# nccl_algo=" + value(algo) + ",nccl_proto=" + value(proto) + "\n";
}

void add_nccl_lists_json(nlohmann::json& j, const std::string& algo, const std::string& proto) {
  if (algo.empty() && proto.empty()) return;
  j["nccl_algo"] = algo.empty() ? nlohmann::json(nullptr) : nlohmann::json(algo);
  j["nccl_proto"] = proto.empty() ? nlohmann::json(nullptr) : nlohmann::json(proto);
}

}  // namespace twinccl::cli
