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
#include "twinccl/call_site_text.h"
#include "twinccl/emu/option_table.h"
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
double parse_seconds(const char* var, const std::string& text, double above, double max) {
  const std::string expected = "expected seconds as a decimal number above " +
                               std::to_string(static_cast<long long>(above)) + ", at most " +
                               std::to_string(static_cast<long long>(max)) + ", such as 300 or 0.5";
  const std::optional<double> v = parse_plain_decimal(text);
  if (!v || !(*v > above && *v <= max)) bad(var, text, expected);
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

// The row's variable, when set, into `o` (emu/option_table.h: its type, range and names).
void read_option(const emu::OptionRow& row, RunOptions& o) {
  const std::string var(row.env);
  const std::string text = env(var.c_str());
  if (var.empty() || text.empty()) return;
  const emu::OptionField& f = row.field;
  if (!row.env_names.empty()) {  // a switch or a CheckLevel: the value is the name's position
    std::vector<std::string> names;
    for (std::string_view rest = row.env_names; !rest.empty();) {
      const std::size_t bar = std::min(rest.find('|'), rest.size());
      names.emplace_back(rest.substr(0, bar));
      rest.remove_prefix(std::min(bar + 1, rest.size()));
    }
    const auto at = std::find(names.begin(), names.end(), parse_name(var.c_str(), text, names));
    const long long index = at - names.begin();
    if (std::holds_alternative<bool emu::EmulatorOptions::*>(f)) {
      emu::set_switch(o, row, index == 1);
    } else {
      emu::set_whole(o, row, index, var + ": ");
    }
  } else if (std::holds_alternative<double emu::EmulatorOptions::*>(f)) {
    emu::set_seconds(o, row, parse_seconds(var.c_str(), text, row.min, row.max), var + ": ");
  } else if (std::holds_alternative<std::string emu::EmulatorOptions::*>(f)) {
    try {
      emu::set_text(o, row, text);
    } catch (const ConfigError& e) {
      bad(var.c_str(), text, e.what());
    }
  } else {  // a whole number
    emu::set_whole(o, row,
                   parse_integer(var.c_str(), text, static_cast<long long>(row.min),
                                 static_cast<long long>(std::min(row.max, 1e18)),
                                 "; " + std::string(row.help)),
                   var + ": ");
  }
}

}  // namespace

RunOptions options_from_environment() {
  RunOptions o;
  if (auto b = env("TWINCCL_BACKEND"); !b.empty())
    o.backend = parse_name("TWINCCL_BACKEND", b, {"emu", "nccl"});
  for (const emu::OptionRow& row : emu::option_table()) read_option(row, o);
  o.topology = env("TWINCCL_TOPOLOGY");
  o.trace_path = env("TWINCCL_TRACE");
  o.timeline_path = env("TWINCCL_TIMELINE");
  if (!o.topology.empty() && o.timeline_path.empty()) o.timeline_path = "twinccl-timeline.json";
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
  } catch (...) {
    // A rank's own code threw something not derived from std::exception (`throw 42;`, a type of
    // its own): run() rethrows it as it is, and main() would end in std::terminate (before: abort,
    // exit code 134, "terminate called after throwing an instance of 'int'").
    std::cerr << "twinccl: a rank failed with an exception not derived from std::exception "
                 "(thrown by the program's own code; TwinCCL's errors derive from twinccl::Error, "
                 "itself a std::exception)\n";
    return 1;
  }
}

}  // namespace twinccl
