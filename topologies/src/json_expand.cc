// Repetition and placeholders for the JSON topology format (see json_expand.h).
#include "json_expand.h"

#include <algorithm>
#include <charconv>
#include <string>

#include "twinccl/errors.h"

namespace twinccl::topo::json_format {
namespace {

constexpr long long kMaxRepetitions = 1 << 22;  // guards against a typo like "repeat": 1e9

struct Loop {
  std::string var;
  long long first = 0, last = -1;
};

long long integer_field(const nlohmann::ordered_json& value, const std::string& where) {
  if (!value.is_number_integer()) fail(where, "must be an integer, got " + value.dump());
  return value.get<long long>();
}

std::vector<Loop> loops_of(const nlohmann::ordered_json& entry, const std::string& where) {
  std::vector<Loop> loops;
  if (entry.contains("repeat")) {
    const long long n = integer_field(entry["repeat"], where + ".repeat");
    if (n < 0) fail(where + ".repeat", "must be >= 0, got " + std::to_string(n));
    loops.push_back({"i", 0, n - 1});
  }
  if (entry.contains("for_each")) {
    const auto& spec = entry["for_each"];
    if (!spec.is_object()) fail(where + ".for_each", "must be an object like {\"i\": 8}");
    for (const auto& [var, range] : spec.items()) {
      const std::string at = where + ".for_each." + var;
      if (range.is_array()) {
        if (range.size() != 2) fail(at, "must be a count or [first, last], got " + range.dump());
        loops.push_back(
            {var, integer_field(range[0], at + "[0]"), integer_field(range[1], at + "[1]")});
      } else {
        const long long n = integer_field(range, at);
        if (n < 0) fail(at, "must be >= 0, got " + std::to_string(n));
        loops.push_back({var, 0, n - 1});
      }
    }
  }
  long long total = 1;
  for (const Loop& l : loops) {
    total *= l.last >= l.first ? l.last - l.first + 1 : 0;
    if (total > kMaxRepetitions) {
      fail(where, "repeats more than " + std::to_string(kMaxRepetitions) + " times");
    }
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
    if (close == std::string_view::npos)
      fail(where, "unclosed '{' in \"" + std::string(text) + "\"");
    out.append(text.substr(pos, open - pos));
    const std::string_view expr = text.substr(open + 1, close - open - 1);
    const std::size_t op_at = expr.find_first_of("+-*/%");
    const std::string_view var = expr.substr(0, op_at);
    const auto it =
        std::find_if(vars.rbegin(), vars.rend(), [&](const auto& p) { return p.first == var; });
    if (it == vars.rend()) {
      std::string known;
      for (const auto& [name, value] : vars) known += (known.empty() ? "" : ", ") + name;
      fail(where, "unknown variable '" + std::string(var) + "' in \"" + std::string(text) +
                      "\" (known here: " + (known.empty() ? "none" : known) + ")");
    }
    long long value = it->second;
    if (op_at != std::string_view::npos) {
      const std::string_view operand = expr.substr(op_at + 1);
      long long k = 0;
      const auto [end, ec] = std::from_chars(operand.data(), operand.data() + operand.size(), k);
      if (ec != std::errc{} || end != operand.data() + operand.size()) {
        fail(where, "bad placeholder {" + std::string(expr) + "}: expected {var OP integer}");
      }
      const char op = expr[op_at];
      if ((op == '/' || op == '%') && k == 0)
        fail(where, "division by zero in {" + std::string(expr) + "}");
      switch (op) {
        case '+':
          value += k;
          break;
        case '-':
          value -= k;
          break;
        case '*':
          value *= k;
          break;
        case '/':
          value /= k;
          break;
        default:
          value %= k;
          break;
      }
    }
    out += std::to_string(value);
    pos = close + 1;
  }
  return out;
}

}  // namespace twinccl::topo::json_format
