// DataType: sizes, names and parsing (canonical names plus nccl-tests' spellings).
#include "twinccl/data_type.h"

#include <string>

#include "kernels_text.h"
#include "twinccl/call_site_text.h"
#include "twinccl/errors.h"

namespace twinccl {
namespace {

struct TypeInfo {
  std::string_view name;
  std::size_t bytes;
  bool floating;
};

// Indexed by the enum's value; kAllDataTypes lists the same order.
constexpr std::array<TypeInfo, kAllDataTypes.size()> kTypeInfo = {{
    {"int8", 1, false},
    {"uint8", 1, false},
    {"int32", 4, false},
    {"uint32", 4, false},
    {"int64", 8, false},
    {"uint64", 8, false},
    {"float16", 2, true},
    {"bfloat16", 2, true},
    {"float32", 4, true},
    {"float64", 8, true},
    {"float8_e4m3", 1, true},
    {"float8_e5m2", 1, true},
}};

struct Alias {
  std::string_view text;
  DataType type;
};

// Other spellings users type (nccl-tests, PyTorch, MLIR).
constexpr Alias kAliases[] = {
    {"half", DataType::float16},         {"fp16", DataType::float16},
    {"bf16", DataType::bfloat16},        {"float", DataType::float32},
    {"fp32", DataType::float32},         {"double", DataType::float64},
    {"fp64", DataType::float64},         {"f8e4m3", DataType::float8_e4m3},
    {"fp8_e4m3", DataType::float8_e4m3}, {"e4m3", DataType::float8_e4m3},
    {"f8e5m2", DataType::float8_e5m2},   {"fp8_e5m2", DataType::float8_e5m2},
    {"e5m2", DataType::float8_e5m2},
};

const TypeInfo& info_or_throw(DataType type, const char* function) {
  if (!is_valid(type)) {
    throw InvalidArgument(std::string(function) + ": data type value " +
                          detail::raw_value_text(type) + " is outside the DataType enum");
  }
  return kTypeInfo[static_cast<std::size_t>(type)];
}

}  // namespace

bool is_valid(DataType type) { return static_cast<std::size_t>(type) < kTypeInfo.size(); }

std::size_t size_of(DataType type) { return info_or_throw(type, "size_of").bytes; }

std::string_view name(DataType type) {
  return is_valid(type) ? kTypeInfo[static_cast<std::size_t>(type)].name : "invalid";
}

bool is_floating(DataType type) { return info_or_throw(type, "is_floating").floating; }

DataType parse_data_type(std::string_view text) {
  for (DataType type : kAllDataTypes) {
    if (text == name(type)) return type;
  }
  for (const Alias& alias : kAliases) {
    if (text == alias.text) return alias.type;
  }
  std::string accepted;
  for (DataType type : kAllDataTypes) {
    if (!accepted.empty()) accepted += ", ";
    accepted += name(type);
  }
  throw InvalidArgument("unknown data type '" + shown_value(text) + "'; accepted: " + accepted +
                        " (also half, fp16, bf16, float, fp32, double, fp64, f8e4m3, e4m3, "
                        "fp8_e4m3, f8e5m2, e5m2, fp8_e5m2)");
}

}  // namespace twinccl
