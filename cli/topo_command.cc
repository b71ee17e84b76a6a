// `twinccl topo list | show NAME | check FILE` [--gpu MODEL --nvlink FABRIC --nic-gbps RATE
// --gpu-count N --nic-count M --nodes N] [--set K=V --degrade PART=RATE --fail PART].
#include <fmt/format.h>

#include <algorithm>
#include <ostream>

#include "commands.h"
#include "twinccl/errors.h"
#include "twinccl/topologies/describe.h"
#include "twinccl/topologies/nccl_xml_hints.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_edit.h"

namespace twinccl::cli {

CLI::App* add_topo_command(CLI::App& app, TopoOptions& o) {
  CLI::App* cmd = app.add_subcommand("topo", "list, show or check topologies");
  cmd->add_option("action", o.action, "list | show | check")
      ->required()
      ->check(CLI::IsMember({"list", "show", "check"}));
  cmd->add_option("target", o.target,
                  "preset name (show) or topology file (check: .json or NCCL .xml)");
  add_xml_hint_flags(cmd, o.xml);
  add_topology_flags(cmd, o.edits);
  return cmd;
}

int run_topo_command(const TopoOptions& o, std::ostream& out) {
  if (o.action == "list") {
    const std::vector<topo::PresetInfo> presets = topo::list_presets();
    std::size_t pattern_width = 6, example_width = 7;  // the columns fit the longest entry
    for (const topo::PresetInfo& p : presets) {
      pattern_width = std::max(pattern_width, p.pattern.size());
      example_width = std::max(example_width, p.example.size());
    }
    out << fmt::format("{:<{}} {:<{}} {}\n", "preset", pattern_width, "example", example_width,
                       "description");
    for (const topo::PresetInfo& p : presets) {
      out << fmt::format("{:<{}} {:<{}} {}\n", p.pattern, pattern_width, p.example, example_width,
                         p.description);
    }
    return 0;
  }
  if (o.target.empty())
    throw InvalidArgument("topo " + o.action + " needs a preset name or a file");
  const topo::NcclXmlHints hints = to_hints(o.xml);
  const bool xml = o.target.size() > 4 && o.target.substr(o.target.size() - 4) == ".xml";
  std::optional<topo::Topology> t;
  if (xml) {
    const topo::NcclXmlImport r = topo::load_nccl_xml(o.target, hints);
    for (const std::string& w : r.warnings) out << "warning: " << w << "\n";
    for (const std::string& n : r.notes) out << "note: " << n << "\n";
    t = hints.nodes > 1 ? topo::rail_cluster(r.topology, hints.nodes) : r.topology;
  } else {
    t = topo::load_topology(o.target, hints);
  }
  const topo::EditedTopology edited = topo::apply_edits(*t, to_edits(o.edits));
  t = edited.topology;
  for (const std::string& n : edited.notes) out << "what-if: " << n << "\n";
  if (o.action == "show") {
    out << topo::describe(*t) << "\n" << topo::draw_node(*t, 0);
  } else {
    out << topo::check_report(*t);
  }
  return 0;
}

}  // namespace twinccl::cli
