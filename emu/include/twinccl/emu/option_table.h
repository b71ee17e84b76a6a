// The emulator's options as data: one row per EmulatorOptions field (name, TWINCCL_* variable,
// type, range, help). check_options, run()'s environment, Python's twinccl.run keywords and their
// help all read it, so an option is added in 4 files (docs/architecture.md, "One owner").
//
//   const emu::OptionRow* row = emu::find_option("max_p2p_lane_threads");
//   emu::set_whole(options, *row, 64, "twinccl.run: ");  // ConfigError outside [1, 2^20]
//   for (const emu::OptionRow& r : emu::option_table()) std::cout << emu::help_line(r) << "\n";
#pragma once

#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <variant>

#include "twinccl/emu/emulator.h"

namespace twinccl::emu {

// The field a row sets; its type is the option's: whole numbers (int, size_t; a CheckLevel as
// 0..2), seconds (double), a switch (bool) or text (string).
using OptionField = std::variant<int EmulatorOptions::*, std::size_t EmulatorOptions::*,
                                 CheckLevel EmulatorOptions::*, double EmulatorOptions::*,
                                 bool EmulatorOptions::*, std::string EmulatorOptions::*>;

inline constexpr double kNoUpperBound = std::numeric_limits<double>::infinity();

struct OptionRow {
  std::string_view name;  // the field of EmulatorOptions and RunOptions, twinccl.run's keyword
  std::string_view env;   // the TWINCCL_* variable run() reads ("": none)
  OptionField field;
  double min = 0, max = 0;     // whole numbers: [min, max]; seconds: (min, max]
  std::string_view env_names;  // a switch or a CheckLevel: the variable's names of 0, 1, ...
  std::string_view help;       // one line
  void (*check_text)(const std::string& value) = nullptr;  // text: else a ConfigError
};

std::span<const OptionRow> option_table();
const OptionRow* find_option(std::string_view name);  // nullptr when no row has that name
std::string help_line(const OptionRow& row);          // "name=default: help (range; TWINCCL_NAME)"

// ConfigError when the row's field of `options` is out of range: "<who><name>=<value> must be in
// [min, max] (<help>; <variable>)"; `refuse_value` throws it for a value the caller spells.
void check_option(const EmulatorOptions& options, const OptionRow& row, std::string_view who);
[[noreturn]] void refuse_value(const OptionRow& row, std::string_view who,
                               const std::string& shown);

// Setting by name (the environment, Python), checked as check_option does before a number is
// narrowed to its field. set_whole sets a CheckLevel too.
void set_whole(EmulatorOptions& options, const OptionRow& row, long long value,
               std::string_view who);
void set_seconds(EmulatorOptions& options, const OptionRow& row, double value,
                 std::string_view who);
void set_switch(EmulatorOptions& options, const OptionRow& row, bool value);
void set_text(EmulatorOptions& options, const OptionRow& row, const std::string& value);

}  // namespace twinccl::emu
