// Typed, range-checked field access for the JSON reader (see json_fields.h).
#include "json_fields.h"

#include <cmath>
#include <sstream>

#include "input_checks.h"
#include "json_expand.h"

namespace twinccl::topo::json_format {

std::string join(const std::string& where, const std::string& key) {
  return where.empty() ? key : where + "." + key;
}

std::string number_text(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

std::string describe(const json& value) {
  switch (value.type()) {
    case json::value_t::string:
      return input::echo(value.get_ref<const std::string&>());
    case json::value_t::array:
      return "an array of " + std::to_string(value.size()) + " elements";
    case json::value_t::object:
      return "an object with " + std::to_string(value.size()) + " fields";
    default:
      return value.dump();  // a number, true, false or null: short
  }
}

void only_fields(const json& obj, const std::string& where, const std::set<std::string>& known) {
  if (!obj.is_object()) fail(where, "must be an object, got " + describe(obj));
  for (const auto& [key, value] : obj.items()) {
    if (known.count(key) > 0) continue;
    std::string list;
    for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
    fail(where, "unknown field " + input::echo(key, '\'') + " (known: " + list + ")");
  }
}

const json* field(const json& obj, const json& fallback, const char* key) {
  if (obj.is_object() && obj.contains(key)) return &obj[key];
  if (fallback.is_object() && fallback.contains(key)) return &fallback[key];
  return nullptr;
}

std::string string_field(const json& obj, const std::string& where, const char* key,
                         std::size_t max_bytes) {
  const std::string at = join(where, key);
  if (!obj.contains(key)) fail(at, "missing (required)");
  const json& v = obj[key];
  if (!v.is_string()) fail(at, "must be a string, got " + describe(v));
  const std::string& text = v.get_ref<const std::string&>();
  if (text.size() > max_bytes) {
    fail(at,
         "longer than " + std::to_string(max_bytes) + " bytes (the cap), got " + input::echo(text));
  }
  return text;
}

long long int_field(const json& obj, const json& fallback, const std::string& where,
                    const char* key, long long default_value, long long lo, long long hi) {
  const json* v = field(obj, fallback, key);
  if (v == nullptr) return default_value;
  const std::string at = join(where, key);
  if (!v->is_number_integer()) fail(at, "must be an integer, got " + describe(*v));
  const bool too_big = v->is_number_unsigned()
                           ? v->get<unsigned long long>() > static_cast<unsigned long long>(hi)
                           : v->get<long long>() > hi;
  if (too_big || (!v->is_number_unsigned() && v->get<long long>() < lo)) {
    fail(at, "must be in " + std::to_string(lo) + ".." + std::to_string(hi) + ", got " + v->dump());
  }
  return v->get<long long>();
}

double number_field(const json& obj, const json& fallback, const std::string& where,
                    const char* key, std::optional<double> default_value, double lo, double hi,
                    const char* unit) {
  const json* v = field(obj, fallback, key);
  if (v == nullptr) {
    if (!default_value) fail(join(where, key), "missing (required)");
    return *default_value;
  }
  if (!v->is_number()) fail(join(where, key), "must be a number, got " + describe(*v));
  const double x = v->get<double>();
  if (!(x >= lo && x <= hi)) {  // also NaN
    fail(join(where, key), "must be in " + number_text(lo) + ".." + number_text(hi) + unit +
                               ", got " + number_text(x));
  }
  return x;
}

std::optional<bool> bool_field(const json& obj, const std::string& where, const char* key) {
  if (!obj.contains(key)) return std::nullopt;
  if (!obj[key].is_boolean()) {
    fail(join(where, key), "must be true or false, got " + describe(obj[key]));
  }
  return obj[key].get<bool>();
}

}  // namespace twinccl::topo::json_format
