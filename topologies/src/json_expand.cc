// Repetition and placeholders for the JSON topology format (see json_expand.h).
#include "json_expand.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>
#include <string>

#include "input_checks.h"
#include "json_fields.h"
#include "twinccl/errors.h"
#include "twinccl/topologies/limits.h"

namespace twinccl::topo::json_format {
namespace {

constexpr long long kMaxRepetitions = 1 << 22;  // guards against a typo like "repeat": 1e9
constexpr std::size_t kMaxVariableBytes = 32;

struct Loop {
  std::string var;
  long long first = 0, last = -1;
};

// An integer in lo..max_loop_value (lo is 0 or -max_loop_value), so "last - first + 1" and
// placeholders fit in 64 bits.
long long integer_field(const nlohmann::ordered_json& value, const std::string& where,
                        long long lo) {
  const long long hi = limits::max_loop_value;
  if (!value.is_number_integer()) fail(where, "must be an integer, got " + describe(value));
  if ((value.is_number_unsigned() &&
       value.get<unsigned long long>() > static_cast<unsigned long long>(hi)) ||
      (!value.is_number_unsigned() &&
       (value.get<long long>() > hi || value.get<long long>() < lo))) {
    fail(where,
         "must be in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " + value.dump());
  }
  return value.get<long long>();
}

bool is_variable_name(std::string_view name) {
  if (name.empty() || name.size() > kMaxVariableBytes ||
      std::isdigit(static_cast<unsigned char>(name[0])))
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

std::vector<Loop> loops_of(const nlohmann::ordered_json& entry, const std::string& where) {
  std::vector<Loop> loops;
  if (entry.contains("repeat")) {
    const long long n = integer_field(entry["repeat"], where + ".repeat", 0);
    loops.push_back({"i", 0, n - 1});
  }
  if (entry.contains("for_each")) {
    const auto& spec = entry["for_each"];
    if (!spec.is_object()) fail(where + ".for_each", "must be an object like {\"i\": 8}");
    if (spec.size() > static_cast<std::size_t>(limits::max_loop_variables)) {
      fail(where + ".for_each", "more than " + std::to_string(limits::max_loop_variables) +
                                    " variables (the cap), got " + std::to_string(spec.size()));
    }
    for (const auto& [var, range] : spec.items()) {
      if (!is_variable_name(var)) {
        fail(where + ".for_each", "variable " + input::echo(var, '\'') +
                                      " is not a name (letters, digits, _; up to " +
                                      std::to_string(kMaxVariableBytes) + " bytes)");
      }
      const std::string at = where + ".for_each." + var;
      if (range.is_array()) {
        if (range.size() != 2) fail(at, "must be a count or [first, last], got " + describe(range));
        const long long cap = limits::max_loop_value;
        loops.push_back({var, integer_field(range[0], at + "[0]", -cap),
                         integer_field(range[1], at + "[1]", -cap)});
      } else {
        const long long n = integer_field(range, at, 0);
        loops.push_back({var, 0, n - 1});
      }
    }
  }
  // Values are within +-2^40, so a loop's length fits; the product is checked factor by factor.
  long long total = 1;
  for (const Loop& l : loops) {
    const long long length = l.last >= l.first ? l.last - l.first + 1 : 0;
    if (length > kMaxRepetitions || total * length > kMaxRepetitions) {
      fail(where, "repeats more than " + std::to_string(kMaxRepetitions) + " times (the cap)");
    }
    total *= length;
  }
  return loops;
}

void run(const std::vector<Loop>& loops, std::size_t depth, Vars& vars, const std::string& where,
         const std::string& label, const std::function<void(const Vars&, const std::string&)>& fn) {
  if (depth == loops.size()) {
    fn(vars, label.empty() ? where : where + " (" + label + ")");
    return;
  }
  const Loop& loop = loops[depth];
  for (long long v = loop.first; v <= loop.last; ++v) {
    vars.emplace_back(loop.var, v);
    const std::string here =
        (label.empty() ? "" : label + ", ") + loop.var + "=" + std::to_string(v);
    run(loops, depth + 1, vars, where, here, fn);
    vars.pop_back();
  }
}

}  // namespace

void fail(const std::string& where, const std::string& message) {
  throw ConfigError(where + ": " + message);
}

long long repetition_count(const nlohmann::ordered_json& entry, const std::string& where) {
  if (!entry.is_object()) return 1;  // reported as "must be an object" when read
  long long total = 1;
  for (const Loop& l : loops_of(entry, where))
    total *= l.last >= l.first ? l.last - l.first + 1 : 0;
  return total;
}

void for_each_repetition(const nlohmann::ordered_json& entry, const std::string& where,
                         const Vars& outer,
                         const std::function<void(const Vars&, const std::string&)>& fn) {
  const std::vector<Loop> loops = loops_of(entry, where);
  Vars vars = outer;
  std::string label;
  for (const auto& [var, value] : outer) {
    label += (label.empty() ? "" : ", ") + var + "=" + std::to_string(value);
  }
  run(loops, 0, vars, where, label, fn);
}

std::string substitute(std::string_view text, const Vars& vars, const std::string& where) {
  std::string out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t open = text.find('{', pos);
    if (open == std::string_view::npos) {
      out.append(text.substr(pos));
      break;
    }
    const std::size_t close = text.find('}', open);
    if (close == std::string_view::npos) fail(where, "unclosed '{' in " + input::echo(text));
    out.append(text.substr(pos, open - pos));
    const std::string_view expr = text.substr(open + 1, close - open - 1);
    const std::size_t op_at = expr.find_first_of("+-*/%");
    const std::string_view var = expr.substr(0, op_at);
    const auto it =
        std::find_if(vars.rbegin(), vars.rend(), [&](const auto& p) { return p.first == var; });
    if (it == vars.rend()) {
      std::string known;
      for (const auto& [name, value] : vars) known += (known.empty() ? "" : ", ") + name;
      fail(where, "unknown variable " + input::echo(var, '\'') + " in " + input::echo(text) +
                      " (known here: " + (known.empty() ? "none" : known) + ")");
    }
    long long value = it->second;
    if (op_at != std::string_view::npos) {
      const std::string_view operand = expr.substr(op_at + 1);
      long long k = 0;
      const auto [end, ec] = std::from_chars(operand.data(), operand.data() + operand.size(), k);
      if (ec != std::errc{} || end != operand.data() + operand.size()) {
        fail(where, "bad placeholder " + input::echo(expr) + ": expected {var OP integer}");
      }
      const char op = expr[op_at];
      if ((op == '/' || op == '%') && k == 0)
        fail(where, "division by zero in " + input::echo(expr));
      bool overflow = false;
      switch (op) {
        case '+':
          overflow = __builtin_add_overflow(value, k, &value);
          break;
        case '-':
          overflow = __builtin_sub_overflow(value, k, &value);
          break;
        case '*':
          overflow = __builtin_mul_overflow(value, k, &value);
          break;
        case '/':
          overflow = k == -1 && value == std::numeric_limits<long long>::min();
          if (!overflow) value /= k;
          break;
        default:
          if (k != -1)
            value %= k;
          else
            value = 0;
          break;
      }
      if (overflow) fail(where, "placeholder " + input::echo(expr) + " overflows a 64-bit integer");
    }
    out += std::to_string(value);
    pos = close + 1;
  }
  return out;
}

}  // namespace twinccl::topo::json_format
