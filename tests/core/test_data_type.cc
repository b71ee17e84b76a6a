// DataType and ReduceKind: sizes, names, parsing (canonical and nccl-tests spellings), and the
// errors for values outside the enums.
#include <catch2/catch.hpp>
#include <string>

#include "twinccl/data_type.h"
#include "twinccl/errors.h"
#include "twinccl/reduce_op.h"

using twinccl::DataType;
using twinccl::ReduceKind;
using twinccl::ReduceOp;

namespace {

const DataType kBadType = static_cast<DataType>(99);
const ReduceKind kBadKind = static_cast<ReduceKind>(42);

}  // namespace

TEST_CASE("size_of gives the bytes of one element", "[data_type]") {
  CHECK(twinccl::size_of(DataType::int8) == 1);
  CHECK(twinccl::size_of(DataType::uint8) == 1);
  CHECK(twinccl::size_of(DataType::int32) == 4);
  CHECK(twinccl::size_of(DataType::uint32) == 4);
  CHECK(twinccl::size_of(DataType::int64) == 8);
  CHECK(twinccl::size_of(DataType::uint64) == 8);
  CHECK(twinccl::size_of(DataType::float16) == 2);
  CHECK(twinccl::size_of(DataType::bfloat16) == 2);
  CHECK(twinccl::size_of(DataType::float32) == 4);
  CHECK(twinccl::size_of(DataType::float64) == 8);
  CHECK(twinccl::size_of(DataType::float8_e4m3) == 1);
  CHECK(twinccl::size_of(DataType::float8_e5m2) == 1);
}

TEST_CASE("every data type's name parses back to it", "[data_type]") {
  for (DataType type : twinccl::kAllDataTypes) {
    INFO(twinccl::name(type));
    CHECK(twinccl::is_valid(type));
    CHECK(twinccl::parse_data_type(twinccl::name(type)) == type);
  }
  CHECK(twinccl::name(DataType::float8_e4m3) == "float8_e4m3");
  CHECK(twinccl::name(DataType::bfloat16) == "bfloat16");
}

TEST_CASE("is_floating splits integers from floats", "[data_type]") {
  int floating = 0;
  for (DataType type : twinccl::kAllDataTypes) floating += twinccl::is_floating(type) ? 1 : 0;
  CHECK(floating == 6);
  CHECK_FALSE(twinccl::is_floating(DataType::uint64));
  CHECK(twinccl::is_floating(DataType::float8_e5m2));
}

TEST_CASE("parse_data_type accepts nccl-tests and common spellings", "[data_type]") {
  struct Case {
    const char* text;
    DataType type;
  };
  const Case cases[] = {
      {"int8", DataType::int8},
      {"uint8", DataType::uint8},
      {"int32", DataType::int32},
      {"uint32", DataType::uint32},
      {"int64", DataType::int64},
      {"uint64", DataType::uint64},
      {"half", DataType::float16},
      {"float16", DataType::float16},
      {"fp16", DataType::float16},
      {"bfloat16", DataType::bfloat16},
      {"bf16", DataType::bfloat16},
      {"float", DataType::float32},
      {"float32", DataType::float32},
      {"fp32", DataType::float32},
      {"double", DataType::float64},
      {"float64", DataType::float64},
      {"fp64", DataType::float64},
      {"f8e4m3", DataType::float8_e4m3},
      {"fp8_e4m3", DataType::float8_e4m3},
      {"float8_e4m3", DataType::float8_e4m3},
      {"e4m3", DataType::float8_e4m3},
      {"f8e5m2", DataType::float8_e5m2},
      {"fp8_e5m2", DataType::float8_e5m2},
      {"float8_e5m2", DataType::float8_e5m2},
      {"e5m2", DataType::float8_e5m2},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    CHECK(twinccl::parse_data_type(c.text) == c.type);
  }
}

TEST_CASE("parse_data_type rejects unknown names and lists the accepted ones", "[data_type]") {
  for (const char* text : {"", "int16", "Float", "fp8", "float8", " int8"}) {
    INFO(text);
    try {
      twinccl::parse_data_type(text);
      FAIL("no exception");
    } catch (const twinccl::InvalidArgument& e) {
      const std::string message = e.what();
      CHECK(message.find("'" + std::string(text) + "'") != std::string::npos);
      CHECK(message.find("bfloat16") != std::string::npos);
      CHECK(message.find("float8_e5m2") != std::string::npos);
    }
  }
}

TEST_CASE("data type values outside the enum are rejected", "[data_type]") {
  CHECK_FALSE(twinccl::is_valid(kBadType));
  CHECK(twinccl::name(kBadType) == "invalid");
  CHECK_THROWS_AS(twinccl::is_floating(kBadType), twinccl::InvalidArgument);
  try {
    twinccl::size_of(kBadType);
    FAIL("no exception");
  } catch (const twinccl::InvalidArgument& e) {
    const std::string message = e.what();
    CHECK(message.find("size_of") != std::string::npos);
    CHECK(message.find("99") != std::string::npos);
  }
  CHECK_FALSE(twinccl::is_valid(static_cast<DataType>(twinccl::kAllDataTypes.size())));
}

TEST_CASE("reduce kinds have names and parse back", "[reduce_op]") {
  const ReduceKind kinds[] = {ReduceKind::sum, ReduceKind::prod, ReduceKind::min,
                              ReduceKind::max, ReduceKind::avg,  ReduceKind::premul_sum};
  for (ReduceKind kind : kinds) {
    INFO(twinccl::name(kind));
    CHECK(twinccl::is_valid(kind));
    CHECK(twinccl::parse_reduce_kind(twinccl::name(kind)) == kind);
  }
  CHECK(twinccl::name(ReduceKind::premul_sum) == "premul_sum");
  CHECK(twinccl::parse_reduce_kind("premulsum") == ReduceKind::premul_sum);
  CHECK_FALSE(twinccl::is_valid(kBadKind));
  CHECK(twinccl::name(kBadKind) == "invalid");
}

TEST_CASE("to_string prints the op and the premul_sum scalar", "[reduce_op]") {
  CHECK(twinccl::to_string(ReduceOp::sum()) == "sum");
  CHECK(twinccl::to_string(ReduceOp::avg()) == "avg");
  CHECK(twinccl::to_string(ReduceOp::premul_sum(0.5)) == "premul_sum(0.5)");
  CHECK(twinccl::to_string(ReduceOp::premul_sum(-3)) == "premul_sum(-3)");
  CHECK(twinccl::to_string(ReduceOp::premul_sum(0.1)) == "premul_sum(0.1)");
  CHECK_THROWS_AS(twinccl::to_string(ReduceOp{kBadKind, 1.0}), twinccl::InvalidArgument);
}

TEST_CASE("parse_reduce_kind rejects unknown ops and lists the accepted ones", "[reduce_op]") {
  for (const char* text : {"", "add", "Sum", "mean", "premul"}) {
    INFO(text);
    try {
      twinccl::parse_reduce_kind(text);
      FAIL("no exception");
    } catch (const twinccl::InvalidArgument& e) {
      const std::string message = e.what();
      CHECK(message.find("'" + std::string(text) + "'") != std::string::npos);
      CHECK(message.find("premul_sum") != std::string::npos);
    }
  }
}
