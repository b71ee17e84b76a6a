// Paths the topology tests read: the example files under topologies/examples/.
#pragma once

#include <filesystem>
#include <string>

namespace twinccl::topo::testing {

inline std::filesystem::path example_path(const std::string& file) {
  return std::filesystem::path(TWINCCL_SOURCE_DIR) / "topologies" / "examples" / file;
}

}  // namespace twinccl::topo::testing
