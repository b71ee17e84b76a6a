// --algo / --proto in NCCL_ALGO / NCCL_PROTO syntax (nccl_list_flags.h).
//
// How it works: a value that is exactly one of twinccl's names is left where it was (forced, as
// before); any other value moves to the lists and is read by the log readers' own parser
// (sim::nccl_algo_list / nccl_proto_list, NCCL's parseList rules) for each request's collective.
// The parser's ConfigError becomes an InvalidArgument that names the option and adds twinccl's
// names, the other accepted spelling.
#include "nccl_list_flags.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <tuple>
#include <utility>

#include "flag_values.h"
#include "twinccl/errors.h"
#include "twinccl/sim/nccl_env_choice.h"
#include "twinccl/sim/selection.h"

namespace twinccl::cli {
namespace {

constexpr const char* kProtocols[] = {"LL", "LL128", "Simple"};

bool is_protocol_name(const std::string& text) {
  return std::find(std::begin(kProtocols), std::end(kProtocols), text) != std::end(kProtocols);
}

// The collectives NCCL chooses an algorithm for (NCCL_ALGO's per-collective prefixes, src/init.cc
// ncclFuncStr); the others run as send/recv, which NCCL_ALGO does not steer.
bool nccl_tunes(OpKind kind) {
  return kind == OpKind::all_reduce || kind == OpKind::all_gather ||
         kind == OpKind::reduce_scatter || kind == OpKind::broadcast || kind == OpKind::reduce;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
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

}  // namespace

std::string NcclListFlags::note() const {
  // "--algo (or TWINCCL_ALGO)" -> "--algo"
  const auto option = [](const std::string& flag) { return flag.substr(0, flag.find(' ')); };
  std::string from;
  if (!algo.empty()) from = fmt::format("NCCL_ALGO={} (from {})", shown(algo), option(algo_flag));
  if (!proto.empty()) {
    from += fmt::format("{}NCCL_PROTO={} (from {})", from.empty() ? "" : ", ", shown(proto),
                        option(proto_flag));
  }
  if (from.empty()) return "";
  return from +
         ": NCCL's choice among what they allow, as with these variables set (the "
         "algorithm/protocol reported is the pair it took)";
}

NcclListFlags take_nccl_lists(std::string& algorithm, std::string& protocol,
                              const std::vector<std::string>& twinccl_algorithms,
                              const std::vector<OpKind>& collectives, const std::string& algo_flag,
                              const std::string& proto_flag) {
  NcclListFlags l;
  l.algo_flag = algo_flag;
  l.proto_flag = proto_flag;
  const bool twinccl_algo = algorithm.empty() || algorithm == "help" ||
                            std::find(twinccl_algorithms.begin(), twinccl_algorithms.end(),
                                      algorithm) != twinccl_algorithms.end();
  if (!twinccl_algo) l.algo = std::exchange(algorithm, "");
  if (!protocol.empty() && !is_protocol_name(protocol)) l.proto = std::exchange(protocol, "");
  for (const OpKind k : collectives) {
    if (nccl_tunes(k)) (void)read_lists(l, k, joined(twinccl_algorithms));
  }
  return l;
}

void restrict_request(sim::Request& r, const NcclListFlags& l) {
  if (!l.any() || !nccl_tunes(r.spec.kind)) return;
  Lists lists = read_lists(l, r.spec.kind, "");
  // predict_logged's rule: one algorithm and at most one protocol left is that pair forced.
  if (r.algorithm.empty() && lists.algorithms.size() == 1 &&
      (r.protocol || lists.protocols.size() <= 1)) {
    r.algorithm = lists.algorithms.front();
    if (!r.protocol && lists.protocols.size() == 1) r.protocol = lists.protocols.front();
    return;
  }
  if (r.algorithm.empty()) r.allowed_algorithms = std::move(lists.algorithms);
  if (!r.protocol) r.allowed_protocols = std::move(lists.protocols);
}

std::string forced_nccl_name(const std::string& value, const std::string& flag, bool algorithm) {
  const std::vector<std::string> names = sim::selectable_algorithms(true);
  if (value.empty() || (algorithm ? std::find(names.begin(), names.end(), value) != names.end()
                                  : is_protocol_name(value))) {
    return value;
  }
  if (value.find_first_of(",^;:") == std::string::npos) {
    NcclListFlags l;
    (algorithm ? l.algo : l.proto) = value;
    (algorithm ? l.algo_flag : l.proto_flag) = flag;
    const Lists one = read_lists(l, OpKind::all_reduce, algorithm ? joined(names) : "");
    if (algorithm && one.algorithms.size() == 1) return one.algorithms.front();
    if (!algorithm && one.protocols.size() == 1) return std::string(sim::name(one.protocols[0]));
  }
  throw InvalidArgument(fmt::format(
      "{} '{}': a replay forces one {} on every collective of the trace; NCCL_{} lists (',', '^', "
      "'allreduce:...') restrict a sweep's prediction only (perf --backend sim, whatif without "
      "--replay); give one name: {}",
      flag, shown(value), algorithm ? "algorithm" : "protocol", algorithm ? "ALGO" : "PROTO",
      algorithm ? joined(names) : "LL, LL128, Simple"));
}

std::string unapplied_environment_note(const std::string& algorithm, const std::string& protocol) {
  std::string set, how;
  for (const auto& [variable, given, flag] : {std::tuple{"NCCL_ALGO", &algorithm, "--algo"},
                                              std::tuple{"NCCL_PROTO", &protocol, "--proto"}}) {
    const char* value = std::getenv(variable);
    if (value == nullptr || *value == '\0' || !given->empty()) continue;
    set += fmt::format("{}{}={}", set.empty() ? "" : " and ", variable, shown(value));
    how += fmt::format("{}{} '{}'", how.empty() ? "" : " ", flag, shown(value));
  }
  if (set.empty()) return "";
  return fmt::format(
      "twinccl: note: {} set in this environment {} NOT applied to the prediction (NCCL's own "
      "choice is predicted); to predict with {}, give {}",
      set, set.find(" and ") == std::string::npos ? "is" : "are",
      set.find(" and ") == std::string::npos ? "it" : "them", how);
}

}  // namespace twinccl::cli
