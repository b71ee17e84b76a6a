// The NCCL_ALGO / NCCL_PROTO a log line gives (nccl_tests_log_parts.h).
//
// How it works: NCCL prints the two variables it was given when it tunes a communicator, with
// NCCL_DEBUG=INFO: "host:123:456 [0] NCCL INFO NCCL_ALGO set by environment to Ring" (NVIDIA/nccl
// v2.30.7-1 src/graph/tuning.cc:455 and :460, the same words since 2.12); cluster scripts print
// their environment ("NCCL_ALGO=Ring", "export NCCL_ALGO=Ring", `mpirun -x NCCL_ALGO=Ring ...`).
// The value is the first word after "to " or '=', quotes dropped.
#include <string>
#include <utility>

#include "nccl_tests_log_parts.h"

namespace twinccl::sim::nccl_tests {

std::optional<std::string> nccl_env_value(std::string_view line, std::string_view variable) {
  std::string_view rest;
  const std::string info = std::string(variable) + " set by environment to ";
  if (const std::size_t at = line.find(info); at != std::string_view::npos) {
    rest = line.substr(at + info.size());
  } else {
    for (const std::string_view token : split(line)) {
      if (token.size() > variable.size() && token.substr(0, variable.size()) == variable &&
          token[variable.size()] == '=') {
        rest = token.substr(variable.size() + 1);
        break;
      }
    }
  }
  const std::vector<std::string_view> t = split(rest);
  if (t.empty()) return std::nullopt;
  std::string_view v = t.front();
  while (!v.empty() && (v.front() == '"' || v.front() == '\'')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == '"' || v.back() == '\'')) v.remove_suffix(1);
  if (v.empty()) return std::nullopt;
  // Escaped (unprintable bytes as \xNN), never cut: a long list NCCL reads whole is read whole
  // (the line is at most kNcclTestsMaxLineBytes); messages cut it where they show it.
  return shown(v, 4 * kNcclTestsMaxLineBytes);
}

void NcclEnv::read(std::string_view line, int line_no) {
  if (std::optional<std::string> v = nccl_env_value(line, "NCCL_ALGO")) {
    algo = std::move(*v);
    algo_from = "line " + std::to_string(line_no);
  }
  if (std::optional<std::string> v = nccl_env_value(line, "NCCL_PROTO")) {
    proto = std::move(*v);
    proto_from = "line " + std::to_string(line_no);
  }
}

void NcclEnv::apply(NcclTestsTable& table) const {
  table.nccl_algo = algo;
  table.nccl_algo_from = algo_from;
  table.nccl_proto = proto;
  table.nccl_proto_from = proto_from;
}

}  // namespace twinccl::sim::nccl_tests
