// The what-if flags (topology_flags.h): CLI11 options, the per-topology form "NAME --set ...", and
// one loader every command calls.
#include "topology_flags.h"

#include <sstream>

#include "flag_values.h"
#include "twinccl/errors.h"
#include "twinccl/topologies/presets.h"

namespace twinccl::cli {
namespace {

constexpr std::size_t kMaxEdits = 256;  // per topology: more is a typo loop, not a study

void add_edit(TopologyFlags& flags, const std::string& flag, const std::string& value,
              const std::string& spec) {
  if (flag == "--set") {
    flags.sets.push_back(value);
  } else if (flag == "--degrade") {
    flags.faults.emplace_back(topo::FaultKind::degrade, value);
  } else if (flag == "--fail") {
    flags.faults.emplace_back(topo::FaultKind::fail, value);
  } else {
    throw InvalidArgument("--topology '" + shown(spec) + "': unknown '" + shown(flag) +
                          "' after the name; a topology may carry --set NAME=VALUE, --degrade "
                          "PART=RATE and --fail PART");
  }
}

// "NAME --set a=1 --fail=x": the name is everything before the first " --" (a file name may hold
// spaces); the rest are flag/value pairs, "--flag value" or "--flag=value".
std::string split_spec(const std::string& spec, TopologyFlags& own) {
  const std::size_t cut = spec.find(" --");
  std::string name = spec.substr(0, cut);
  while (!name.empty() && name.back() == ' ') name.pop_back();
  if (cut == std::string::npos) return name;
  std::istringstream words(spec.substr(cut));
  std::string word;
  while (words >> word) {
    const std::size_t eq = word.find('=');
    const bool joined = eq != std::string::npos && word.rfind("--", 0) == 0 &&
                        (word.substr(0, eq) == "--set" || word.substr(0, eq) == "--degrade" ||
                         word.substr(0, eq) == "--fail");
    if (joined) {
      add_edit(own, word.substr(0, eq), word.substr(eq + 1), spec);
      continue;
    }
    std::string value;
    if (!(words >> value)) {
      throw InvalidArgument("--topology '" + shown(spec) + "': '" + shown(word) +
                            "' needs a value");
    }
    add_edit(own, word, value, spec);
  }
  return name;
}

}  // namespace

void add_topology_flags(CLI::App* cmd, TopologyFlags& f) {
  std::string names;
  for (const topo::ParameterInfo& p : topo::settable_parameters()) {
    names += (names.empty() ? "" : ", ") + p.name;
  }
  cmd->add_option("--set", f.sets,
                  "what-if parameter NAME=VALUE (repeat): " + names +
                      " (docs/whatif.md says what each sets)")
      ->allow_extra_args(false);
  // Faults apply in the order given, --degrade and --fail mixed: each is recorded as it is parsed.
  cmd->add_option_function<std::string>(
         "--degrade",
         [&f](const std::string& v) { f.faults.emplace_back(topo::FaultKind::degrade, v); },
         "what-if fault PART=RATE (repeat): the part keeps RATE of its speed, e.g. "
         "nic3@node1=25% (a GPU: a slow GPU); PART as `topo show` names it, "
         "NAME@nodeN, or a link A<->B; faults apply in the order given")
      ->trigger_on_parse()
      ->allow_extra_args(false);
  cmd->add_option_function<std::string>(
         "--fail", [&f](const std::string& v) { f.faults.emplace_back(topo::FaultKind::fail, v); },
         "what-if fault PART (repeat): a failed NIC, switch or link; routes avoid it "
         "where a path remains; faults apply in the order given")
      ->trigger_on_parse()
      ->allow_extra_args(false);
}

topo::TopologyEdits to_edits(const TopologyFlags& f) {
  if (f.sets.size() + f.faults.size() > kMaxEdits) {
    throw InvalidArgument("--set/--degrade/--fail: more than " + std::to_string(kMaxEdits) +
                          " edits for one topology");
  }
  topo::TopologyEdits e;
  for (const std::string& s : f.sets) e.settings.push_back(topo::parse_setting(s));
  for (const auto& [kind, text] : f.faults) e.faults.push_back(topo::parse_fault(kind, text));
  return e;
}

LoadedTopology load_edited_topology(const std::string& spec, const TopologyFlags& common,
                                    const topo::NcclXmlHints& hints) {
  TopologyFlags all = common;
  TopologyFlags own;
  const std::string name = split_spec(spec, own);
  if (name.empty()) throw InvalidArgument("--topology '" + shown(spec) + "': no topology name");
  all.sets.insert(all.sets.end(), own.sets.begin(), own.sets.end());
  all.faults.insert(all.faults.end(), own.faults.begin(), own.faults.end());
  const topo::TopologyEdits edits = to_edits(all);
  topo::EditedTopology r = topo::apply_edits(topo::load_topology(name, hints), edits);
  return {r.topology, r.notes, spec, r.gpu_speed};
}

std::vector<double> compute_slowdown(const LoadedTopology& t) {
  std::vector<double> out;
  for (double speed : t.gpu_speed) out.push_back(speed > 0.0 ? 1.0 / speed : 1.0);
  return out;
}

std::string edits_text(const TopologyFlags& f) {
  std::string out;
  for (const std::string& s : f.sets) out += " --set " + s;
  for (const auto& [kind, text] : f.faults)
    out += (kind == topo::FaultKind::degrade ? " --degrade " : " --fail ") + text;
  return out;
}

}  // namespace twinccl::cli
