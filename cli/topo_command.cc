// `twinccl topo list | show NAME | check FILE`.
#include <fmt/format.h>

#include <ostream>

#include "commands.h"
#include "twinccl/errors.h"
#include "twinccl/topologies/describe.h"
#include "twinccl/topologies/presets.h"

namespace twinccl::cli {

CLI::App* add_topo_command(CLI::App& app, TopoOptions& o) {
  CLI::App* cmd = app.add_subcommand("topo", "list, show or check topologies");
  cmd->add_option("action", o.action, "list | show | check")->required()->check(CLI::IsMember({"list", "show", "check"}));
  cmd->add_option("target", o.target, "preset name (show) or topology file (check: .json or NCCL .xml)");
  return cmd;
}

int run_topo_command(const TopoOptions& o, std::ostream& out) {
  if (o.action == "list") {
    out << fmt::format("{:<22} {:<18} {}\n", "preset", "example", "description");
    for (const topo::PresetInfo& p : topo::list_presets()) {
      out << fmt::format("{:<22} {:<18} {}\n", p.pattern, p.example, p.description);
    }
    return 0;
  }
  if (o.target.empty()) throw InvalidArgument("topo " + o.action + " needs a preset name or a file");
  topo::Topology t = topo::load_topology(o.target);
  if (o.action == "show") {
    out << topo::describe(t) << "\n" << topo::draw_node(t, 0);
  } else {
    out << topo::check_report(t);
  }
  return 0;
}

}  // namespace twinccl::cli
