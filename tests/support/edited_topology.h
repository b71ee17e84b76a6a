// A topology with `--set` edits applied as the command line applies them (topo::parse_setting,
// topo::apply_edits), for tests:
//
// clang-format off
//   const topo::Topology p5 = twinccl_test::preset_with("aws-p5-2", {"p2p_net_chunk_bytes=524288"});
//   const topo::Topology off = twinccl_test::with_settings(topo::dgx_h100(), {"nvls=0"});
//   const topo::Topology intel = twinccl_test::with_host_cpu(topo::load_topology("aws-p5-2"), "x86");
// clang-format on
// with_host_cpu (with_file_fact) goes through the topology file's "host_cpu", as a user who saves
// a preset with `topo show --format json` and edits it does (`--set host_cpu=NAME` sets the same
// fact: tests/fidelity/test_fidelity_host_net_post.cc checks that both predict alike).
#pragma once

#include <string>
#include <vector>

#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_edit.h"
#include "twinccl/topologies/topology_file.h"

namespace twinccl_test {

inline twinccl::topo::Topology with_settings(const twinccl::topo::Topology& topology,
                                             const std::vector<std::string>& settings) {
  twinccl::topo::TopologyEdits edits;
  for (const std::string& s : settings) edits.settings.push_back(twinccl::topo::parse_setting(s));
  return twinccl::topo::apply_edits(topology, edits).topology;
}

inline twinccl::topo::Topology preset_with(const std::string& preset,
                                           const std::vector<std::string>& settings) {
  return with_settings(twinccl::topo::load_topology(preset), settings);
}

// The topology saved as its file, the fact `key` ("host_cpu", "network") set to `value`, read back.
inline twinccl::topo::Topology with_file_fact(const twinccl::topo::Topology& topology,
                                              const std::string& key, const std::string& value) {
  std::string json = twinccl::topo::to_json(topology);
  const std::string field = "\"" + key + "\"";
  // to_json writes the key (when not the default) on a line; "network" is also a link type's value
  const std::size_t old = json.find(field + ":");
  if (old != std::string::npos) json.erase(old, json.find('\n', old) - old + 1);
  json.insert(json.find('{') + 1, field + ": \"" + value + "\", ");
  return twinccl::topo::topology_from_json(json);
}

inline twinccl::topo::Topology with_host_cpu(const twinccl::topo::Topology& topology,
                                             const std::string& cpu) {
  return with_file_fact(topology, "host_cpu", cpu);
}

}  // namespace twinccl_test
