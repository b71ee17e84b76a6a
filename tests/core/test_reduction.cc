// Reduction: how the ops of every rank become one combine op plus scaling / post-division, the
// mismatch and support errors, and whole reductions over world sizes 1..16 checked against values
// computed independently.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "twinccl/errors.h"
#include "twinccl/float_formats.h"
#include "twinccl/reduction.h"

using twinccl::DataType;
using twinccl::ReduceKind;
using twinccl::ReduceOp;
using twinccl::Reduction;
namespace fp = twinccl::fp;

namespace {

constexpr int kWorldSizes[] = {1, 2, 3, 4, 7, 8, 16};
constexpr std::size_t kCounts[] = {0, 1, 7, 1001};

std::vector<ReduceOp> same_op(ReduceOp op, int nranks) {
  return std::vector<ReduceOp>(static_cast<std::size_t>(nranks), op);
}

// Reduces rank by rank in order 0, 1, ..., n-1, as a linear chain would.
template <typename T>
std::vector<T> reduce_in_rank_order(const Reduction& r, const std::vector<std::vector<T>>& inputs,
                                    std::size_t count) {
  std::vector<T> acc(count), tmp(count);
  r.load(0, acc.data(), inputs[0].data(), count);
  for (std::size_t rank = 1; rank < inputs.size(); ++rank) {
    r.load(static_cast<int>(rank), tmp.data(), inputs[rank].data(), count);
    r.combine(acc.data(), acc.data(), tmp.data(), count);
  }
  r.finalize(acc.data(), count);
  return acc;
}

std::string message_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no exception)";
}

}  // namespace

TEST_CASE("sum prod min and max combine as they are", "[reduction]") {
  for (ReduceKind kind : {ReduceKind::sum, ReduceKind::prod, ReduceKind::min, ReduceKind::max}) {
    for (int n : kWorldSizes) {
      const auto ops = same_op(ReduceOp{kind, 1.0}, n);
      const Reduction r = Reduction::make(DataType::bfloat16, ops);
      CHECK(r.dtype == DataType::bfloat16);
      CHECK(r.combine_op == kind);
      CHECK_FALSE(r.scales_inputs());
      CHECK_FALSE(r.has_finalize());
    }
  }
}

TEST_CASE("avg scales float inputs by 1/nranks and post-divides integers", "[reduction]") {
  for (int n : kWorldSizes) {
    INFO("nranks " << n);
    const auto ops = same_op(ReduceOp::avg(), n);
    const Reduction f = Reduction::make(DataType::float16, ops);
    CHECK(f.combine_op == ReduceKind::sum);
    REQUIRE(f.input_scale.size() == static_cast<std::size_t>(n));
    for (double s : f.input_scale) CHECK(s == 1.0 / n);
    CHECK(f.post_divisor == 0);
    const Reduction i = Reduction::make(DataType::uint8, ops);
    CHECK(i.combine_op == ReduceKind::sum);
    CHECK_FALSE(i.scales_inputs());
    CHECK(i.post_divisor == n);
  }
}

TEST_CASE("premul_sum keeps every rank's own scalar", "[reduction]") {
  const std::vector<ReduceOp> ops = {ReduceOp::premul_sum(0.5), ReduceOp::premul_sum(2.0),
                                     ReduceOp::premul_sum(-1.0)};
  const Reduction r = Reduction::make(DataType::float32, ops);
  CHECK(r.combine_op == ReduceKind::sum);
  CHECK(r.input_scale == std::vector<double>{0.5, 2.0, -1.0});
  const std::vector<ReduceOp> int_ops = {ReduceOp::premul_sum(3), ReduceOp::premul_sum(-2)};
  const Reduction ri = Reduction::make(DataType::int32, int_ops);
  CHECK(ri.input_scale == std::vector<double>{3.0, -2.0});
  CHECK(ri.post_divisor == 0);
}

TEST_CASE("ranks that disagree on the op kind get a MismatchError naming both", "[reduction]") {
  const std::vector<ReduceOp> ops = {ReduceOp::sum(), ReduceOp::sum(), ReduceOp::max()};
  CHECK_THROWS_AS(Reduction::make(DataType::float32, ops), twinccl::MismatchError);
  CHECK(message_of([&] { Reduction::make(DataType::float32, ops); }) ==
        "reduce op mismatch: rank 0 passed sum, rank 2 passed max");
  // Different premul_sum scalars are not a mismatch.
  const std::vector<ReduceOp> premul = {ReduceOp::premul_sum(1), ReduceOp::premul_sum(2)};
  CHECK_NOTHROW(Reduction::make(DataType::float32, premul));
}

TEST_CASE("integer premul_sum needs an integral scalar within the type's range", "[reduction]") {
  CHECK(message_of([] {
          twinccl::check_reduce_op_supported(DataType::int32, ReduceOp::premul_sum(0.5));
        }) == "premul_sum scalar 0.5 is not an integer; int32 needs an integral scalar");
  const std::vector<ReduceOp> ops = {ReduceOp::premul_sum(1), ReduceOp::premul_sum(0.5)};
  const std::string made = message_of([&] { Reduction::make(DataType::int64, ops); });
  CHECK(made.find("rank 1") != std::string::npos);
  CHECK(made.find("0.5") != std::string::npos);
  CHECK_THROWS_AS(Reduction::make(DataType::int64, ops), twinccl::InvalidArgument);

  using twinccl::check_reduce_op_supported;
  CHECK_NOTHROW(check_reduce_op_supported(DataType::uint8, ReduceOp::premul_sum(255)));
  CHECK_THROWS_AS(check_reduce_op_supported(DataType::uint8, ReduceOp::premul_sum(256)),
                  twinccl::InvalidArgument);
  CHECK_THROWS_AS(check_reduce_op_supported(DataType::uint32, ReduceOp::premul_sum(-1)),
                  twinccl::InvalidArgument);
  CHECK_NOTHROW(check_reduce_op_supported(DataType::int8, ReduceOp::premul_sum(-128)));
  CHECK_THROWS_AS(check_reduce_op_supported(DataType::int8, ReduceOp::premul_sum(128)),
                  twinccl::InvalidArgument);
  CHECK_NOTHROW(check_reduce_op_supported(DataType::int64, ReduceOp::premul_sum(-0x1p63)));
  CHECK_THROWS_AS(check_reduce_op_supported(DataType::int64, ReduceOp::premul_sum(0x1p63)),
                  twinccl::InvalidArgument);
  CHECK_NOTHROW(check_reduce_op_supported(DataType::uint64, ReduceOp::premul_sum(0x1p63)));
  CHECK_THROWS_AS(check_reduce_op_supported(DataType::uint64, ReduceOp::premul_sum(0x1p64)),
                  twinccl::InvalidArgument);
  CHECK_NOTHROW(check_reduce_op_supported(DataType::float16, ReduceOp::premul_sum(0.5)));
}

TEST_CASE("non-finite scalars and values outside the enums are rejected", "[reduction]") {
  using twinccl::check_reduce_op_supported;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (DataType t : {DataType::float32, DataType::int32, DataType::float8_e4m3}) {
    INFO(twinccl::name(t));
    CHECK_THROWS_AS(check_reduce_op_supported(t, ReduceOp::premul_sum(nan)),
                    twinccl::InvalidArgument);
    CHECK_THROWS_AS(check_reduce_op_supported(t, ReduceOp::premul_sum(-inf)),
                    twinccl::InvalidArgument);
  }
  CHECK(message_of([&] {
          check_reduce_op_supported(DataType::float32, ReduceOp::premul_sum(inf));
        }).find("inf") != std::string::npos);
  CHECK_NOTHROW(check_reduce_op_supported(DataType::int32, ReduceOp::avg()));
  CHECK_NOTHROW(check_reduce_op_supported(DataType::int32, ReduceOp{ReduceKind::sum, 0.5}));
  const ReduceOp bad_kind{static_cast<ReduceKind>(9), 1.0};
  CHECK(message_of([&] { check_reduce_op_supported(DataType::int32, bad_kind); }).find("9") !=
        std::string::npos);
  CHECK_THROWS_AS(check_reduce_op_supported(static_cast<DataType>(77), ReduceOp::sum()),
                  twinccl::InvalidArgument);
  const std::vector<ReduceOp> ops = {ReduceOp::sum(), bad_kind};
  CHECK_THROWS_AS(Reduction::make(DataType::int32, ops), twinccl::InvalidArgument);
  CHECK_THROWS_AS(Reduction::make(static_cast<DataType>(77), same_op(ReduceOp::sum(), 2)),
                  twinccl::InvalidArgument);
  CHECK_THROWS_AS(Reduction::make(DataType::int32, std::vector<ReduceOp>{}),
                  twinccl::InvalidArgument);
}

TEST_CASE("load copies or scales in place or not and checks the rank", "[reduction]") {
  const Reduction plain = Reduction::make(DataType::int32, same_op(ReduceOp::sum(), 2));
  std::int32_t src[] = {1, -2, 3}, dst[3] = {};
  plain.load(1, dst, src, 3);
  CHECK(std::vector<std::int32_t>(dst, dst + 3) == std::vector<std::int32_t>{1, -2, 3});
  plain.load(0, src, src, 3);  // dst == src: unchanged
  CHECK(src[1] == -2);
  const Reduction scaled = Reduction::make(
      DataType::int32, std::vector<ReduceOp>{ReduceOp::premul_sum(2), ReduceOp::premul_sum(-3)});
  scaled.load(1, src, src, 3);
  CHECK(std::vector<std::int32_t>(src, src + 3) == std::vector<std::int32_t>{-3, 6, -9});
  CHECK_THROWS_AS(scaled.load(2, dst, src, 3), twinccl::InvalidArgument);
  CHECK_THROWS_AS(plain.load(-1, dst, src, 3), twinccl::InvalidArgument);
}

TEST_CASE("whole reductions match independently computed results", "[reduction]") {
  for (int n : kWorldSizes) {
    for (std::size_t count : kCounts) {
      INFO("nranks " << n << " count " << count);
      // int32 avg: exact sum, then truncation toward zero.
      std::vector<std::vector<std::int32_t>> ints(static_cast<std::size_t>(n),
                                                  std::vector<std::int32_t>(count));
      for (int r = 0; r < n; ++r) {
        for (std::size_t i = 0; i < count; ++i) {
          ints[static_cast<std::size_t>(r)][i] =
              static_cast<std::int32_t>((i * 37 + static_cast<std::size_t>(r) * 11) % 201) - 100;
        }
      }
      const auto avg = reduce_in_rank_order(
          Reduction::make(DataType::int32, same_op(ReduceOp::avg(), n)), ints, count);
      std::size_t wrong = 0;
      for (std::size_t i = 0; i < count; ++i) {
        std::int64_t sum = 0;
        for (const auto& in : ints) sum += in[i];
        wrong += avg[i] != sum / n ? 1 : 0;
      }
      CHECK(wrong == 0);

      // float32 avg: each input times float(1/n), summed in float in rank order.
      std::vector<std::vector<float>> floats(static_cast<std::size_t>(n),
                                             std::vector<float>(count));
      for (int r = 0; r < n; ++r) {
        for (std::size_t i = 0; i < count; ++i) {
          floats[static_cast<std::size_t>(r)][i] =
              static_cast<float>(std::sin(static_cast<double>(i) + r)) * 3.0f;
        }
      }
      const auto favg = reduce_in_rank_order(
          Reduction::make(DataType::float32, same_op(ReduceOp::avg(), n)), floats, count);
      const float inv = static_cast<float>(1.0 / n);
      wrong = 0;
      for (std::size_t i = 0; i < count; ++i) {
        float acc = floats[0][i] * inv;
        for (std::size_t r = 1; r < floats.size(); ++r) acc += floats[r][i] * inv;
        wrong += favg[i] != acc ? 1 : 0;
      }
      CHECK(wrong == 0);

      // float16 premul_sum with scalar 0.1 * (rank + 1): scalar rounded to float16, every
      // product and every partial sum rounded to float16.
      std::vector<ReduceOp> ops;
      for (int r = 0; r < n; ++r) ops.push_back(ReduceOp::premul_sum(0.1 * (r + 1)));
      std::vector<std::vector<std::uint16_t>> halves(static_cast<std::size_t>(n),
                                                     std::vector<std::uint16_t>(count));
      for (int r = 0; r < n; ++r) {
        for (std::size_t i = 0; i < count; ++i) {
          halves[static_cast<std::size_t>(r)][i] =
              fp::to_float16(static_cast<double>(i % 97) - 40.0 + 0.25 * r);
        }
      }
      const auto premul =
          reduce_in_rank_order(Reduction::make(DataType::float16, ops), halves, count);
      wrong = 0;
      for (std::size_t i = 0; i < count; ++i) {
        double acc = 0;
        for (int r = 0; r < n; ++r) {
          const double s = fp::from_float16(fp::to_float16(0.1 * (r + 1)));
          const double term = fp::from_float16(
              fp::to_float16(fp::from_float16(halves[static_cast<std::size_t>(r)][i]) * s));
          acc = r == 0 ? term : fp::from_float16(fp::to_float16(acc + term));
        }
        wrong += premul[i] != fp::to_float16(acc) ? 1 : 0;
      }
      CHECK(wrong == 0);

      // uint8 max: the largest input wins.
      std::vector<std::vector<std::uint8_t>> bytes(static_cast<std::size_t>(n),
                                                   std::vector<std::uint8_t>(count));
      for (int r = 0; r < n; ++r) {
        for (std::size_t i = 0; i < count; ++i) {
          bytes[static_cast<std::size_t>(r)][i] =
              static_cast<std::uint8_t>((i * 13 + static_cast<std::size_t>(r) * 71) % 256);
        }
      }
      const auto mx = reduce_in_rank_order(
          Reduction::make(DataType::uint8, same_op(ReduceOp::max(), n)), bytes, count);
      wrong = 0;
      for (std::size_t i = 0; i < count; ++i) {
        std::uint8_t want = 0;
        for (const auto& in : bytes) want = in[i] > want ? in[i] : want;
        wrong += mx[i] != want ? 1 : 0;
      }
      CHECK(wrong == 0);
    }
  }
}
