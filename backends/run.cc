// run(): picks the backend (the one place TWINCCL_* environment variables are read).
#include "twinccl/run.h"

#include <cstdlib>
#include <iostream>
#include <string>

#include "emu/communicator.h"
#include "twinccl/errors.h"
#ifdef TWINCCL_HAVE_NCCL
#include "nccl/launch.h"
#endif

namespace twinccl {
namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

double parse_number(const char* var, const std::string& text, double min, double max) {
  try {
    std::size_t used = 0;
    double v = std::stod(text, &used);
    if (used != text.size() || !(v >= min && v <= max)) throw std::invalid_argument("range");
    return v;
  } catch (const std::exception&) {
    throw ConfigError(std::string(var) + "='" + text + "' is not a number in [" + std::to_string(min) + ", " +
                      std::to_string(max) + "]");
  }
}

}  // namespace

RunOptions options_from_environment() {
  RunOptions o;
  if (auto b = env("TWINCCL_BACKEND"); !b.empty()) {
    if (b != "emu" && b != "nccl") throw ConfigError("TWINCCL_BACKEND='" + b + "': expected emu or nccl");
    o.backend = b;
  }
  if (auto n = env("TWINCCL_WORLD_SIZE"); !n.empty()) {
    double v = parse_number("TWINCCL_WORLD_SIZE", n, 1, 1 << 16);
    if (v != static_cast<int>(v)) throw ConfigError("TWINCCL_WORLD_SIZE='" + n + "' is not an integer");
    o.world_size = static_cast<int>(v);
  }
  o.algorithm = env("TWINCCL_ALGO");
  o.topology = env("TWINCCL_TOPOLOGY");
  o.trace_path = env("TWINCCL_TRACE");
  o.timeline_path = env("TWINCCL_TIMELINE");
  if (!o.topology.empty() && o.timeline_path.empty()) o.timeline_path = "twinccl-timeline.json";
  if (auto t = env("TWINCCL_TIMEOUT_S"); !t.empty()) o.timeout_s = parse_number("TWINCCL_TIMEOUT_S", t, 0.001, 1e7);
  if (auto c = env("TWINCCL_CHECK"); !c.empty()) {
    if (c != "0" && c != "1" && c != "2") throw ConfigError("TWINCCL_CHECK='" + c + "': expected 0 (off), 1 (on) or 2 (debug)");
    o.check = c == "0" ? CheckLevel::off : c == "1" ? CheckLevel::on : CheckLevel::debug;
  }
  if (auto f = env("TWINCCL_FLIGHT_RECORDER_OPS"); !f.empty()) {
    double v = parse_number("TWINCCL_FLIGHT_RECORDER_OPS", f, 1, 1 << 20);
    if (v != static_cast<double>(static_cast<std::size_t>(v))) {
      throw ConfigError("TWINCCL_FLIGHT_RECORDER_OPS='" + f + "' is not an integer");
    }
    o.flight_recorder_ops = static_cast<std::size_t>(v);
  }
  o.flight_recorder_path = env("TWINCCL_FLIGHT_RECORDER");
  if (auto p = env("TWINCCL_EMU_PATH"); !p.empty()) {
    if (p != "schedule" && p != "fast") throw ConfigError("TWINCCL_EMU_PATH='" + p + "': expected schedule or fast");
    o.schedule_path = p == "schedule";
  }
  return o;
}

void run(const RunOptions& options, const RankFunction& fn) {
  if (options.backend == "emu") {
    emu_backend::run_emulated(options, fn);
  } else if (options.backend == "nccl") {
#ifdef TWINCCL_HAVE_NCCL
    nccl::run_world(options, fn);
#else
    throw ConfigError("TWINCCL_BACKEND=nccl but this TwinCCL was built without NCCL (CUDA or NCCL not found)");
#endif
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
