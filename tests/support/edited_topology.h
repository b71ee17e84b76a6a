// A topology with `--set` edits applied as the command line applies them (topo::parse_setting,
// topo::apply_edits), for tests:
//
// clang-format off
//   const topo::Topology p5 = twinccl_test::preset_with("aws-p5-2", {"p2p_net_chunk_bytes=524288"});
//   const topo::Topology off = twinccl_test::with_settings(topo::dgx_h100(), {"nvls=0"});
// clang-format on
#pragma once

#include <string>
#include <vector>

#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_edit.h"

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

}  // namespace twinccl_test
