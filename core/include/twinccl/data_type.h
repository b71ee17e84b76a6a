// Element types, named as NCCL names them (float8 as e4m3/e5m2).
//
//   twinccl::DataType t = twinccl::parse_data_type("bfloat16");
//   size_t bytes = count * twinccl::size_of(t);
//   std::string_view n = twinccl::name(t);   // "bfloat16"
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace twinccl {

enum class DataType : std::uint8_t {
  int8,
  uint8,
  int32,
  uint32,
  int64,
  uint64,
  float16,
  bfloat16,
  float32,
  float64,
  float8_e4m3,
  float8_e5m2,
};

inline constexpr std::array<DataType, 12> kAllDataTypes = {
    DataType::int8,    DataType::uint8,   DataType::int32,       DataType::uint32,
    DataType::int64,   DataType::uint64,  DataType::float16,     DataType::bfloat16,
    DataType::float32, DataType::float64, DataType::float8_e4m3, DataType::float8_e5m2};

// Bytes of one element. Throws InvalidArgument for a value outside the enum.
std::size_t size_of(DataType type);
// "int8", ..., "float8_e4m3"; "invalid" for a value outside the enum.
std::string_view name(DataType type);
// Accepts the names above and nccl-tests' short ones (int8, uint8, int32, uint32, int64, uint64,
// half, float, double, bfloat16, f8e4m3, f8e5m2, fp16, bf16, fp32, fp64, ...).
// Throws InvalidArgument listing the accepted names.
DataType parse_data_type(std::string_view text);
bool is_floating(DataType type);
bool is_valid(DataType type);

}  // namespace twinccl
