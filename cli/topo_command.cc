// `twinccl topo list | show NAME | check FILE` [--gpu MODEL --nvlink FABRIC --nic-gbps RATE
// --gpu-count N --nic-count M --nodes N] [--set K=V --degrade PART=RATE --fail PART]
// [--format text|json] [-o FILE]. `show --format json` writes the topology, edits applied, as the
// JSON file --topology reads (topo::to_json: the same graph and facts back, bit for bit).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <ostream>

#include "commands.h"
#include "output_file.h"
#include "twinccl/errors.h"
#include "twinccl/topologies/describe.h"
#include "twinccl/topologies/nccl_xml_hints.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_edit.h"
#include "twinccl/topologies/topology_file.h"

namespace twinccl::cli {

CLI::App* add_topo_command(CLI::App& app, TopoOptions& o) {
  CLI::App* cmd =
      app.add_subcommand("topo", "list, show (or save as a JSON file) or check topologies");
  cmd->add_option("action", o.action, "list | show | check")
      ->required()
      ->check(CLI::IsMember({"list", "show", "check"}));
  cmd->add_option("target", o.target,
                  "preset name (show) or topology file (check: .json or NCCL .xml)");
  add_xml_hint_flags(cmd, o.xml);
  add_topology_flags(cmd, o.edits);
  // Checked in run_topo_command, so that a wrong value gets the whole story, not CLI11's list.
  cmd->add_option("--format", o.format,
                  "show: text (default: the description and a drawing) or json (the topology, "
                  "edits applied, as a file --topology reads)");
  cmd->add_option("--output,-o", o.output,
                  "show --format json: write the topology file here (default: standard output)");
  return cmd;
}

namespace {

// --format and -o, before anything loads: what they may be, and with which action.
bool wants_json(const TopoOptions& o) {
  const std::string example =
      "twinccl topo show dgx-h100 --set nic_gbps=25 --format json -o "
      "mine.json";
  if (!o.format.empty() && o.format != "text" && o.format != "json") {
    throw InvalidArgument(fmt::format(
        "--format '{}': topo show writes text (the default: the description and a drawing) or "
        "json (the topology as a file --topology reads, e.g. `{}`)",
        shown_value(o.format), example));
  }
  const bool json = o.format == "json";
  if ((!o.format.empty() || !o.output.empty()) && o.action != "show") {
    throw InvalidArgument(
        fmt::format("{}: only `topo show` writes a topology file (`topo {}` "
                    "writes text); to save one: `{}`",
                    o.format.empty() ? "-o" : "--format " + o.format, o.action, example));
  }
  if (!o.output.empty() && !json) {
    throw InvalidArgument(
        fmt::format("-o {}: topo show writes a file only as JSON; add --format "
                    "json (`{}`), or redirect the text with > FILE",
                    shown_value(o.output), example));
  }
  // The advice printed after writing ("use it as --topology FILE") must hold: --topology reads a
  // name as a topology file only when it ends in ".json", lower case (topo::load_topology).
  if (!o.output.empty() && !topo::names_topology_json(o.output)) {
    throw InvalidArgument(fmt::format(
        "-o {}: --topology reads a topology file only by a name ending in .json (lower case), so "
        "that file could not be used; name it e.g. mine.json, or leave -o out to print the JSON",
        shown_value(o.output)));
  }
  return json;
}

// -o naming the file being read would replace the user's topology (an NCCL XML, or a JSON with
// node_templates expanded) before they could compare: refused, whichever way the path is written.
void refuse_output_over_input(const TopoOptions& o) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool same = o.output == o.target || (fs::exists(o.output, ec) && fs::exists(o.target, ec) &&
                                             fs::equivalent(o.output, o.target, ec) && !ec);
  if (!same) return;
  throw InvalidArgument(fmt::format(
      "-o {}: that is the topology being read ({}); writing it would replace it (an NCCL XML by "
      "JSON, a JSON's node_templates by every node expanded). Write to another file: `twinccl "
      "topo show {} ... --format json -o mine.json`",
      shown_value(o.output), shown_value(o.target), shown_value(o.target)));
}

// A topology file holds the graph and its facts; a GPU's compute speed (--degrade of a GPU) is
// the replay's, and would be lost silently.
void refuse_lost_gpu_speed(const std::vector<double>& gpu_speed) {
  std::string ranks;
  for (std::size_t r = 0; r < gpu_speed.size(); ++r) {
    if (gpu_speed[r] != 1.0)
      ranks += fmt::format("{}{} ({:g}%)", ranks.empty() ? "" : ", ", r, gpu_speed[r] * 100.0);
  }
  if (ranks.empty()) return;
  throw InvalidArgument(fmt::format(
      "topo show --format json: --degrade slows the compute of GPU rank {}, which a topology "
      "file has no place for (replay applies it to the trace's compute); save the file without "
      "that --degrade and give it to replay with the file: `twinccl replay TRACE --topology "
      "mine.json --degrade ...`",
      ranks));
}

}  // namespace

int run_topo_command(const TopoOptions& o, std::ostream& out) {
  const bool json = wants_json(o);
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
  if (json && !o.output.empty()) {
    refuse_output_over_input(o);
    check_output_path("--output", o.output);
  }
  // The JSON itself on standard output: the notes go to standard error then.
  std::ostream& notes = json && o.output.empty() ? std::cerr : out;
  const topo::NcclXmlHints hints = to_hints(o.xml);
  const bool xml = o.target.size() > 4 && o.target.substr(o.target.size() - 4) == ".xml";
  std::optional<topo::Topology> t;
  if (xml) {
    const topo::NcclXmlImport r = topo::load_nccl_xml(o.target, hints);
    for (const std::string& w : r.warnings) notes << "warning: " << w << "\n";
    for (const std::string& n : r.notes) notes << "note: " << n << "\n";
    t = hints.nodes > 1 ? topo::rail_cluster(r.topology, hints.nodes) : r.topology;
  } else {
    t = topo::load_topology(o.target, hints);
  }
  const topo::EditedTopology edited = topo::apply_edits(*t, to_edits(o.edits));
  t = edited.topology;
  // `topo check` lists the topology's warnings itself: an edit's note its report already holds is
  // not said twice.
  const bool check = o.action == "check" && !json;
  const std::string report = check ? topo::check_report(*t) : "";
  for (const std::string& n : edited.notes) {
    if (check && report.find(n) != std::string::npos) continue;
    notes << "what-if: " << n << "\n";
  }
  if (json) {
    refuse_lost_gpu_speed(edited.gpu_speed);
    const std::string text = topo::to_json(*t);
    if (o.output.empty()) {
      out << text;
    } else {
      write_output_file("--output", o.output, [&](std::ostream& f) { f << text; });
      out << fmt::format("wrote {} ({}): use it as --topology {}\n", shown_value(o.output),
                         shown_value(t->name(), 256), shown_value(o.output));
    }
  } else if (o.action == "show") {
    out << topo::describe(*t) << "\n" << topo::draw_node(*t, 0);
  } else {
    out << report;
  }
  return 0;
}

}  // namespace twinccl::cli
