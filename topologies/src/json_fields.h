// Internal to the JSON reader: reading one field of a JSON object with its type and range
// checked. Every failure is a ConfigError "<where>.<key>: <what was expected>, got <value>", the
// value shown bounded (input::echo) and without recursing into nested arrays or objects.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace twinccl::topo::json_format {

using json = nlohmann::ordered_json;

// "where.key" (or "key" at the top level).
std::string join(const std::string& where, const std::string& key);
// A value as an error shows it: a short scalar as written, a string quoted and cut,
// "an array of 3 elements", "an object with 2 fields".
std::string describe(const json& value);
std::string number_text(double v);

// ConfigError unless `obj` is an object whose keys are all in `known`.
void only_fields(const json& obj, const std::string& where, const std::set<std::string>& known);
// obj[key], else fallback[key] (defaults), else nullptr.
const json* field(const json& obj, const json& fallback, const char* key);

std::string string_field(const json& obj, const std::string& where, const char* key,
                         std::size_t max_bytes);
// An integer in lo..hi (no silent truncation of 2^32 or 1e3), or default_value when absent.
long long int_field(const json& obj, const json& fallback, const std::string& where,
                    const char* key, long long default_value, long long lo, long long hi);
// A finite number in lo..hi (with `unit` in the message); required when default_value is unset.
double number_field(const json& obj, const json& fallback, const std::string& where,
                    const char* key, std::optional<double> default_value, double lo, double hi,
                    const char* unit);
// true/false, or nullopt when absent.
std::optional<bool> bool_field(const json& obj, const std::string& where, const char* key);

template <typename Enum>
Enum enum_field(const json& obj, const json& fallback, const std::string& where, const char* key,
                std::optional<Enum> default_value, std::optional<Enum> (*parse)(std::string_view),
                const char* spellings);

}  // namespace twinccl::topo::json_format

#include "json_expand.h"  // fail()

namespace twinccl::topo::json_format {

template <typename Enum>
Enum enum_field(const json& obj, const json& fallback, const std::string& where, const char* key,
                std::optional<Enum> default_value, std::optional<Enum> (*parse)(std::string_view),
                const char* spellings) {
  const json* v = field(obj, fallback, key);
  if (v == nullptr) {
    if (!default_value)
      fail(join(where, key), std::string("missing (required; one of ") + spellings + ")");
    return *default_value;
  }
  const std::optional<Enum> e = v->is_string() ? parse(v->get<std::string>()) : std::nullopt;
  if (!e)
    fail(join(where, key), "must be one of " + std::string(spellings) + ", got " + describe(*v));
  return *e;
}

}  // namespace twinccl::topo::json_format
