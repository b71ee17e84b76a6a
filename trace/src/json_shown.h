// How the trace readers (trace_file.cc, the PyTorch importer) show a JSON value in an error.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace twinccl::trace::detail {

// "an array", "an object", "string \"x\"", "number 7" (at most 40 characters of the value).
std::string shown(const nlohmann::json& v);

}  // namespace twinccl::trace::detail
