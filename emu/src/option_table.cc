// The emulator's options table (twinccl/emu/option_table.h) and the one range check of every
// option. To add an option: its field in EmulatorOptions (emulator.h), its row below, the code
// that uses it, its line in docs/misuse.md's Settings table; the environment variable, the range
// check, RunOptions and Python's keyword follow from the row.
#include "twinccl/emu/option_table.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <type_traits>
#include <utility>
#include <vector>

#include "twinccl/algorithms.h"
#include "twinccl/errors.h"
#include "twinccl/output_file.h"

namespace twinccl::emu {
namespace {

// A forced algorithm must be one the registry knows (else it would silently apply nowhere).
void check_algorithm_name(const std::string& name) {
  const std::vector<std::string> known = algorithm_names();
  if (std::find(known.begin(), known.end(), name) != known.end()) return;
  std::string list;
  for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
  throw ConfigError("algorithm '" + name.substr(0, 64) +
                    "' (TWINCCL_ALGO, twinccl.run(algorithm=...), EmulatorOptions::algorithm) is "
                    "not a TwinCCL algorithm; known: " +
                    list + " (twinccl algo)");
}

// The dump is written only when the run fails: a path that cannot be written fails at once, not
// after the failure it was meant to explain.
void check_flight_recorder_path(const std::string& path) {
  check_output_path("TWINCCL_FLIGHT_RECORDER", path);
}

using O = EmulatorOptions;
const OptionRow kRows[] = {
    {"world_size", "TWINCCL_WORLD_SIZE", &O::world_size, 1, kMaxEmulatedRanks, "",
     "emulated ranks: threads of this process"},
    {"algorithm", "TWINCCL_ALGO", &O::algorithm, 0, 0, "",
     "forced on every collective that has it, as `twinccl algo` lists; empty: none",
     check_algorithm_name},
    {"timeout_s", "TWINCCL_TIMEOUT_S", &O::timeout_s, 0, kMaxTimeoutSeconds, "",
     "the longest wait for another rank, in seconds"},
    {"schedule_path", "TWINCCL_EMU_PATH", &O::schedule_path, 0, 0, "fast|schedule",
     "never take the direct fast path: every collective runs its schedule"},
    {"channels", "", &O::channels, 1, kMaxEmulatedChannels, "",
     "schedule channels; not 1 turns the fast path off"},
    {"chunk_elements", "", &O::chunk_elements, 0, kNoUpperBound, "",
     "the schedules' pipelining chunk in elements, 0: none; not 0 turns the fast path off"},
    {"ranks_per_node", "", &O::ranks_per_node, 0, kNoUpperBound, "",
     "ranks per node for tree and hierarchical schedules, 0: every rank on one node"},
    {"check", "TWINCCL_CHECK", &O::check, 0, 2, "0|1|2",
     "CheckLevel: 0 off, 1 deadlock detection and flight recorder, 2 also poisons async outputs"},
    {"flight_recorder_ops", "TWINCCL_FLIGHT_RECORDER_OPS", &O::flight_recorder_ops, 1,
     static_cast<double>(kMaxFlightRecorderOps), "",
     "operations the flight recorder keeps per rank"},
    {"flight_recorder_path", "TWINCCL_FLIGHT_RECORDER", &O::flight_recorder_path, 0, 0, "",
     "the flight recorder's JSON, written when a run fails", check_flight_recorder_path},
    {"p2p_per_peer_streams", "TWINCCL_P2P_STREAMS", &O::p2p_per_peer_streams, 0, 0, "comm|per_peer",
     "send/recv on one stream per (peer, direction), as torch's ProcessGroupNCCL"},
    {"max_p2p_lane_threads", "TWINCCL_MAX_P2P_LANE_THREADS", &O::max_p2p_lane_threads, 1,
     kMaxP2pLaneThreads, "",
     "with TWINCCL_P2P_STREAMS=per_peer: the most send/recv stream threads alive at once"},
};

std::string number(double v) {
  char text[32];
  return std::string(text, std::to_chars(text, text + sizeof text, v).ptr);
}

// The largest value the row's field holds (LLONG_MAX: no limit of its own).
double type_max(const OptionRow& row) {
  return std::holds_alternative<int O::*>(row.field) ? INT_MAX : static_cast<double>(LLONG_MAX);
}

bool is_seconds(const OptionRow& row) { return std::holds_alternative<double O::*>(row.field); }

bool in_range(const OptionRow& row, double v) {  // false for NaN
  if (is_seconds(row)) return v > row.min && v <= row.max;
  return v >= row.min && v <= row.max && v <= type_max(row);
}

std::string range_words(const OptionRow& row) {
  if (is_seconds(row)) return "> " + number(row.min) + " and at most " + number(row.max);
  if (row.max != kNoUpperBound) return "in [" + number(row.min) + ", " + number(row.max) + "]";
  const double most = type_max(row);
  return ">= " + number(row.min) +
         (most < static_cast<double>(LLONG_MAX) ? " and at most " + number(most) : "");
}

// The row's field of `o` as a number (text: 0) and as a person reads it.
std::pair<double, std::string> value_of(const EmulatorOptions& o, const OptionRow& row) {
  return std::visit(
      [&](auto member) -> std::pair<double, std::string> {
        const auto& v = o.*member;
        using T = std::remove_cvref_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) return {0, '"' + v + '"'};
        if constexpr (std::is_same_v<T, bool>) return {v, v ? "true" : "false"};
        if constexpr (std::is_same_v<T, double>) return {v, number(v)};
        if constexpr (std::is_same_v<T, CheckLevel>)
          return {static_cast<int>(v), std::to_string(static_cast<int>(v))};
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>)
          return {static_cast<double>(v), std::to_string(v)};
      },
      row.field);
}

template <class T>
T& field_of(EmulatorOptions& options, const OptionRow& row) {
  if (const auto* member = std::get_if<T O::*>(&row.field)) return options.*(*member);
  throw InternalError("option " + std::string(row.name) + " is not of the type it is set with");
}

}  // namespace

std::span<const OptionRow> option_table() { return kRows; }

const OptionRow* find_option(std::string_view name) {
  for (const OptionRow& row : kRows)
    if (row.name == name) return &row;
  return nullptr;
}

std::string help_line(const OptionRow& row) {
  const auto [_, value] = value_of(EmulatorOptions{}, row);
  std::string range(row.env_names);
  if (range.empty() && value[0] != '"') range = range_words(row);
  if (!row.env.empty()) range += (range.empty() ? "" : "; ") + std::string(row.env);
  return std::string(row.name) + "=" + value + ": " + std::string(row.help) +
         (range.empty() ? "" : " (" + range + ")");
}

void refuse_value(const OptionRow& row, std::string_view who, const std::string& shown) {
  std::string where = " (" + std::string(row.help);
  if (!row.env.empty()) where += "; " + std::string(row.env);
  throw ConfigError(std::string(who) + std::string(row.name) + "=" + shown + " must be " +
                    range_words(row) + where + ")");
}

void check_option(const EmulatorOptions& options, const OptionRow& row, std::string_view who) {
  if (const auto* text = std::get_if<std::string O::*>(&row.field)) {
    if (row.check_text && !(options.*(*text)).empty()) row.check_text(options.*(*text));
  } else if (!std::holds_alternative<bool O::*>(row.field)) {
    const auto [v, shown] = value_of(options, row);
    if (!in_range(row, v)) refuse_value(row, who, shown);
  }
}

void check_options(const EmulatorOptions& options) {
  for (const OptionRow& row : kRows) check_option(options, row, "EmulatorOptions::");
}

void set_whole(EmulatorOptions& options, const OptionRow& row, long long value,
               std::string_view who) {
  if (!in_range(row, static_cast<double>(value))) refuse_value(row, who, std::to_string(value));
  if (const auto* m = std::get_if<int O::*>(&row.field)) {
    options.*(*m) = static_cast<int>(value);
  } else if (const auto* size = std::get_if<std::size_t O::*>(&row.field)) {
    options.*(*size) = static_cast<std::size_t>(value);
  } else {
    field_of<CheckLevel>(options, row) = static_cast<CheckLevel>(value);
  }
}

void set_seconds(EmulatorOptions& options, const OptionRow& row, double value,
                 std::string_view who) {
  field_of<double>(options, row) = value;
  check_option(options, row, who);
}

void set_switch(EmulatorOptions& options, const OptionRow& row, bool value) {
  field_of<bool>(options, row) = value;
}

void set_text(EmulatorOptions& options, const OptionRow& row, const std::string& value) {
  field_of<std::string>(options, row) = value;
  check_option(options, row, "");
}

}  // namespace twinccl::emu
