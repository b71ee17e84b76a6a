// run(): picks the backend (the one place TWINCCL_* environment variables are read). The backends
// are looked up by name in backend_registry.h: the emulator always, NCCL when the program links
// TwinCCL's NCCL library (TwinCCL::nccl).
#include "twinccl/run.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "backend_registry.h"
#include "twinccl/algorithms.h"
#include "twinccl/call_site_text.h"
#include "twinccl/errors.h"
#include "twinccl/plain_decimal.h"

namespace twinccl {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

[[noreturn]] void bad(const char* var, const std::string& text, const std::string& expected) {
  throw ConfigError(std::string(var) + "='" + shown_value(text) + "': " + expected);
}

// Decimal digits only: no sign, spaces, "0x", exponent or fraction ("1e3", "0x10", " 8" refused).
long long parse_integer(const char* var, const std::string& text, long long min, long long max,
                        const std::string& note = "") {
  const std::string expected = "expected a whole number in [" + std::to_string(min) + ", " +
                               std::to_string(max) + "] (decimal digits only)" + note;
  if (text.empty() || text.size() > 18) bad(var, text, expected);
  long long v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') bad(var, text, expected);
    v = v * 10 + (c - '0');
  }
  if (v < min || v > max) bad(var, text, expected);
  return v;
}

// Digits with an optional fraction ("300", "0.5"); no sign, exponent, nan, inf or hex.
double parse_seconds(const char* var, const std::string& text, double min, double max) {
  const std::string expected = "expected seconds as a decimal number in [" +
                               std::to_string(min).substr(0, 5) + ", " +
                               std::to_string(static_cast<long long>(max)) + "] such as 300 or 0.5";
  const std::optional<double> v = parse_plain_decimal(text);
  if (!v || !(*v >= min && *v <= max)) bad(var, text, expected);
  return *v;
}

// One of `names` exactly; the message lists them.
std::string parse_name(const char* var, const std::string& text,
                       const std::vector<std::string>& names) {
  std::string list;
  for (const std::string& n : names) {
    if (text == n) return text;
    list += (list.empty() ? "" : ", ") + n;
  }
  bad(var, text, "unknown value; valid: " + list);
}

}  // namespace

RunOptions options_from_environment() {
  RunOptions o;
  if (auto b = env("TWINCCL_BACKEND"); !b.empty())
    o.backend = parse_name("TWINCCL_BACKEND", b, {"emu", "nccl"});
  if (auto n = env("TWINCCL_WORLD_SIZE"); !n.empty()) {
    o.world_size = static_cast<int>(parse_integer(
        "TWINCCL_WORLD_SIZE", n, 1, kMaxEmulatedRanks,
        "; emulated ranks are threads, at most " + std::to_string(kMaxEmulatedRanks)));
  }
  if (auto a = env("TWINCCL_ALGO"); !a.empty())
    o.algorithm = parse_name("TWINCCL_ALGO", a, algorithm_names());
  o.topology = env("TWINCCL_TOPOLOGY");
  o.trace_path = env("TWINCCL_TRACE");
  o.timeline_path = env("TWINCCL_TIMELINE");
  if (!o.topology.empty() && o.timeline_path.empty()) o.timeline_path = "twinccl-timeline.json";
  if (auto t = env("TWINCCL_TIMEOUT_S"); !t.empty())
    o.timeout_s = parse_seconds("TWINCCL_TIMEOUT_S", t, 0.001, kMaxTimeoutSeconds);
  if (auto c = env("TWINCCL_CHECK"); !c.empty()) {
    c = parse_name("TWINCCL_CHECK", c, {"0", "1", "2"});
    o.check = c == "0" ? CheckLevel::off : c == "1" ? CheckLevel::on : CheckLevel::debug;
  }
  if (auto f = env("TWINCCL_FLIGHT_RECORDER_OPS"); !f.empty()) {
    o.flight_recorder_ops =
        static_cast<std::size_t>(parse_integer("TWINCCL_FLIGHT_RECORDER_OPS", f, 1, 1 << 20));
  }
  o.flight_recorder_path = env("TWINCCL_FLIGHT_RECORDER");
  if (auto s = env("TWINCCL_P2P_STREAMS"); !s.empty())
    o.p2p_per_peer_streams =
        parse_name("TWINCCL_P2P_STREAMS", s, {"comm", "per_peer"}) == "per_peer";
  if (auto m = env("TWINCCL_MAX_P2P_LANE_THREADS"); !m.empty()) {
    o.max_p2p_lane_threads = static_cast<int>(parse_integer(
        "TWINCCL_MAX_P2P_LANE_THREADS", m, 1, kMaxP2pLaneThreads,
        "; threads of per-peer send/recv streams (TWINCCL_P2P_STREAMS=per_peer) alive at once"));
  }
  if (auto p = env("TWINCCL_EMU_PATH"); !p.empty()) {
    o.schedule_path = parse_name("TWINCCL_EMU_PATH", p, {"fast", "schedule"}) == "schedule";
  }
  return o;
}

void run(const RunOptions& options, const RankFunction& fn) {
  if (const backends::Backend* backend = backends::find(options.backend)) {
    backend->run_world(options, fn);
  } else if (options.backend == "nccl") {
    throw ConfigError(
        "TWINCCL_BACKEND=nccl but this program was linked without TwinCCL's NCCL backend "
        "(linked: " +
        backends::linked_names() +
        "); link TwinCCL::nccl (pkg-config twinccl-nccl), "
        "which is built when CUDA and NCCL are found");
  } else {
    throw ConfigError("unknown backend '" + options.backend + "': expected emu or nccl");
  }
}

int run(int /*argc*/, char** /*argv*/, const RankFunction& fn) {
  try {
    run(options_from_environment(), fn);
    return 0;
  } catch (const ConfigError& e) {
    std::cerr << "twinccl: configuration error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "twinccl: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace twinccl
