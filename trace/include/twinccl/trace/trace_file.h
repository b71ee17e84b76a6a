// The trace file (docs/traces.md): versioned JSON, read and written here; what a replay needs
// beyond the file's shape (counterparts agree, no deadlock) is sim::check_trace's.
//
//   trace::save(recorder.trace(), "step.trace.json");
//   trace::Trace t = trace::load("step.trace.json");   // ConfigError naming file, JSON path, value
//   sim::Trace checked = sim::load_trace("step.trace.json");  // the same, then check_trace
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "twinccl/trace/trace.h"

namespace twinccl::trace {

// {"format": "twinccl-trace", "version": 1, "program", "world_size",
//  "communicators": [{"name", "ranks"}], "ranks": [{"rank", "ops": [...], "events": [...]}]}.
std::string to_json(const Trace& trace);
// Parses a trace held in memory: every field with its exact type and range, the caps while
// parsing. Throws ConfigError naming `source`, the JSON path and the problem; a file of another
// version says which version it has and which this TwinCCL reads. Does not check that the ranks
// agree (sim::check_trace does).
Trace from_json(std::string_view text, std::string_view source = "<json>");
// The file, streamed (at most kMaxTraceFileBytes), read as from_json reads a text.
Trace load(const std::filesystem::path& path);
void save(const Trace& trace, const std::filesystem::path& path);

}  // namespace twinccl::trace
