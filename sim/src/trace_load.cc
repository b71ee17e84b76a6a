// Traces as the simulator takes them: the trace library's file, then check_trace (trace_check.cc).
#include "twinccl/sim/replay_trace.h"
#include "twinccl/trace/trace_file.h"

namespace twinccl::sim {

std::string to_json(const Trace& trace) { return trace::to_json(trace); }

Trace trace_from_json(std::string_view text, std::string_view source) {
  Trace trace = trace::from_json(text, source);
  check_trace(trace, source);
  return trace;
}

Trace load_trace(const std::filesystem::path& path) {
  Trace trace = trace::load(path);
  check_trace(trace, path.string());
  return trace;
}

void save_trace(const Trace& trace, const std::filesystem::path& path) { trace::save(trace, path); }

}  // namespace twinccl::sim
