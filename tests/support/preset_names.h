// Every preset `twinccl topo list` names, as names load_topology takes: each pattern's example,
// and patterns with a count (N nodes, R racks, RxG, torus RxC) at several counts. Shared by the
// JSON round-trip tests (tests/topologies, tests/sim).
//
//   for (const std::string& name : twinccl_test::every_preset_name()) load_topology(name);
#pragma once

#include <string>
#include <vector>

#include "twinccl/topologies/presets.h"

namespace twinccl_test {

inline std::vector<std::string> every_preset_name() {
  std::vector<std::string> names;
  const auto ends_with = [](const std::string& text, const std::string& tail) {
    return text.size() >= tail.size() &&
           text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
  };
  for (const twinccl::topo::PresetInfo& p : twinccl::topo::list_presets()) {
    names.push_back(p.example);
    // A pattern no rule below expands is still tested through its example.
    if (ends_with(p.pattern, "-N")) {
      const std::string stem = p.pattern.substr(0, p.pattern.size() - 1);
      for (const char* n : {"1", "3", "5"}) names.push_back(stem + n);
    } else if (ends_with(p.pattern, "-R") || ends_with(p.pattern, "-R[xG]")) {
      const std::string stem = p.pattern.substr(0, p.pattern.rfind('-') + 1);
      for (const char* r : {"1", "3"}) names.push_back(stem + r);
      if (ends_with(p.pattern, "[xG]")) names.push_back(stem + "3x36");
    } else if (ends_with(p.pattern, "-RxG")) {
      names.push_back(p.pattern.substr(0, p.pattern.size() - 3) + "1x4");
    } else if (p.pattern.rfind("torus-", 0) == 0) {
      names.push_back("torus-3x5-75.5");
      names.push_back("torus-1x7");
    }
  }
  return names;
}

}  // namespace twinccl_test
