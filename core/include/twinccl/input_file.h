// Input files a user names (topologies, traces, nccl-tests logs, profiles), opened by every reader
// here: a missing file, a folder or a file past its cap is a ConfigError naming what and the path.
//
//   std::string text = read_input_file("topology file", path, 64 << 20, "; use templates");
//   // "cannot read topology file 'x.json': no such file", or past the cap: "cannot read topology
//   // file 'x.json': more than 67108864 bytes (the cap per file; use templates)"
//   std::ifstream in = open_input_file("trace file", path);  // for a reader that streams
#pragma once

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

namespace twinccl {

std::ifstream open_input_file(std::string_view what, const std::filesystem::path& path);

// The whole file, refused while reading past max_bytes (a pipe or a device has no size to check).
std::string read_input_file(std::string_view what, const std::filesystem::path& path,
                            std::size_t max_bytes, std::string_view over_cap_advice = "");

}  // namespace twinccl
