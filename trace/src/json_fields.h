// How the trace readers (trace_file.cc, the PyTorch importer) read one JSON value: its type and
// range checked, a ConfigError "<source>: <name>: <what>" naming the field and showing the value
// ("t.json: ranks[0].ops[2].count: must be a whole number, is string \"3\"",
// "r1.json: traceEvents[8] (record_param_comms): 'In msg nelems': number -1 is outside 0..1e+15").
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "twinccl/errors.h"

namespace twinccl::trace::detail {

// "an array", "an object", "string \"x\"", "number 7" (at most 40 characters of the value).
std::string shown(const nlohmann::json& v);

[[noreturn]] inline void fail(std::string_view source, std::string_view name,
                              const std::string& what) {
  throw ConfigError(std::string(source) + ": " + std::string(name) + ": " + what);
}

inline const nlohmann::json* member(const nlohmann::json& obj, const char* key) {
  const auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

inline std::string range_text(double lo, double hi) {
  std::ostringstream out;
  out << lo << ".." << hi;
  return out.str();
}

// An integer in [lo, hi] (nlohmann keeps non-negative ones unsigned); 2.5, "3", true and 2^40
// for an int are refused.
template <class T = std::int64_t>
T whole(const nlohmann::json& v, std::string_view source, std::string_view name,
        std::type_identity_t<T> lo = std::numeric_limits<T>::min(),
        std::type_identity_t<T> hi = std::numeric_limits<T>::max()) {
  if (!v.is_number_integer()) fail(source, name, "must be a whole number, is " + shown(v));
  const bool fits = v.is_number_unsigned() ? std::cmp_greater_equal(v.get<std::uint64_t>(), lo) &&
                                                 std::cmp_less_equal(v.get<std::uint64_t>(), hi)
                                           : std::cmp_greater_equal(v.get<std::int64_t>(), lo) &&
                                                 std::cmp_less_equal(v.get<std::int64_t>(), hi);
  if (!fits)
    fail(source, name, shown(v) + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
  return v.is_number_unsigned() ? static_cast<T>(v.get<std::uint64_t>())
                                : static_cast<T>(v.get<std::int64_t>());
}

// A finite number in [lo, hi].
inline double finite(const nlohmann::json& v, std::string_view source, std::string_view name,
                     double lo = std::numeric_limits<double>::lowest(),
                     double hi = std::numeric_limits<double>::max()) {
  if (!v.is_number()) fail(source, name, "must be a number, is " + shown(v));
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < lo || d > hi)
    fail(source, name, shown(v) + " is outside " + range_text(lo, hi));
  return d;
}

// A string of at most max_bytes.
inline std::string text(const nlohmann::json& v, std::string_view source, std::string_view name,
                        std::size_t max_bytes) {
  if (!v.is_string()) fail(source, name, "must be a string, is " + shown(v));
  const auto& s = v.get_ref<const std::string&>();
  if (s.size() > max_bytes)
    fail(source, name,
         "is " + std::to_string(s.size()) + " bytes, over the cap of " + std::to_string(max_bytes));
  return s;
}

}  // namespace twinccl::trace::detail
