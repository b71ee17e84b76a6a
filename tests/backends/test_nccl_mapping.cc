// The NCCL backend's mapping onto NCCL and CUDA, run through the recording test double
// (tests/backends/nccl_double, loaded by the same run-time loading as the real libraries).
// This checks the MAPPING - which NCCL/CUDA calls with which counts, pointers, groups and stream
// order - and the data the double moves accordingly. It does not test NCCL: only a GPU can.
#if defined(TWINCCL_NCCL_DOUBLE_PATH)

#include <catch2/catch.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "nccl/launch.h"
#include "nccl_double/control.h"
#include "twinccl/errors.h"

using namespace twinccl;

namespace {

RunOptions options(double timeout_s = 30) {
  RunOptions o;
  o.backend = "nccl";
  o.timeout_s = timeout_s;
  return o;
}

std::vector<int> devices(int n) {
  std::vector<int> d(static_cast<std::size_t>(n));
  std::iota(d.begin(), d.end(), 0);
  return d;
}

Buffer filled(Communicator& c, std::vector<float> values) {
  Buffer b = c.alloc(values.size(), DataType::float32);
  b.copy_from_host(values.data(), values.size() * sizeof(float));
  return b;
}

std::vector<float> iota_from(float first, std::size_t n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), first);
  return v;
}

}  // namespace

TEST_CASE("nccl mapping: every collective moves the right data at 1, 2, 3 ranks",
          "[nccl_mapping]") {
  nccl_double::use();
  const int n = GENERATE(1, 2, 3);
  const std::size_t k = 5;
  nccl::run_local_ranks(devices(n), options(), [&](Communicator& w) {
    const int r = w.rank();
    const auto mine = iota_from(static_cast<float>(10 * r), k);
    Buffer in = filled(w, mine);
    Buffer out = w.alloc(k, DataType::float32);
    w.all_reduce(in, out, ReduceOp::sum());
    std::vector<float> sum(k, 0);
    for (int p = 0; p < n; ++p) {
      for (std::size_t i = 0; i < k; ++i)
        sum[i] += static_cast<float>(10 * p) + static_cast<float>(i);
    }
    CHECK(out.to_host<float>() == sum);
    Buffer gathered = w.alloc(k * static_cast<std::size_t>(n), DataType::float32);
    w.all_gather(in, gathered);
    std::vector<float> all;
    for (int p = 0; p < n; ++p) {
      auto part = iota_from(static_cast<float>(10 * p), k);
      all.insert(all.end(), part.begin(), part.end());
    }
    CHECK(gathered.to_host<float>() == all);
    Buffer bc = filled(w, mine);
    w.broadcast(bc, n - 1);
    CHECK(bc.to_host<float>() == iota_from(static_cast<float>(10 * (n - 1)), k));
    Buffer a2a = w.alloc(k * static_cast<std::size_t>(n), DataType::float32);
    Buffer src = filled(w, all);
    w.all_to_all(src, a2a);
    std::vector<float> expect_a2a;
    for (int p = 0; p < n; ++p) {
      auto part = iota_from(static_cast<float>(10 * r), k);
      expect_a2a.insert(expect_a2a.end(), part.begin(), part.end());
    }
    CHECK(a2a.to_host<float>() == expect_a2a);
    Buffer rs = w.alloc(k, DataType::float32);
    w.reduce_scatter(src, rs, ReduceOp::max());
    CHECK(rs.to_host<float>() == iota_from(static_cast<float>(10 * r), k));
    const std::vector<std::size_t> counts(static_cast<std::size_t>(n), k);
    Buffer agv = w.alloc(k * static_cast<std::size_t>(n), DataType::float32);
    w.all_gather_v(in.data(), agv.data(), counts, {}, DataType::float32);
    CHECK(agv.to_host<float>() == all);
    w.barrier();
    w.all_reduce(in, in, ReduceOp::avg());  // in place
    std::vector<float> avg(sum);
    for (float& x : avg) x /= static_cast<float>(n);
    CHECK(in.to_host<float>() == avg);
  });
  const std::string log = nccl_double::log();
  CHECK(nccl_double::violations().empty());
  CHECK(log.find("ncclAllReduce") != std::string::npos);
  CHECK(log.find("ncclAlltoAll") != std::string::npos);  // NCCL 2.28.9: the native call
  CHECK(log.find("blocking=0") != std::string::npos);    // non-blocking communicators
  CHECK(log.find("blocking=1") == std::string::npos);
  if (n > 1) CHECK(log.find("ncclSend") != std::string::npos);  // all_gather_v: grouped send/recv
}

TEST_CASE(
    "nccl mapping: before NCCL 2.28.3 all_to_all/gather/scatter fall back to grouped send/recv",
    "[nccl_mapping]") {
  nccl_double::handle();
  nccl_double::set("nccl_version", 22703);
  nccl_double::use();
  nccl::run_local_ranks(devices(2), options(), [&](Communicator& w) {
    const int r = w.rank();
    Buffer src = filled(w, {float(r), float(r) + 10});
    Buffer dst = w.alloc(2, DataType::float32);
    w.all_to_all(src, dst);
    CHECK(dst.to_host<float>() ==
          std::vector<float>{float(r == 0 ? 0 : 10), float(r == 0 ? 1 : 11)});
    Buffer one = filled(w, {float(r + 1)});
    w.gather(one.data(), dst.data(), 1, DataType::float32, 0);
    if (r == 0) CHECK(dst.to_host<float>() == std::vector<float>{1, 2});
  });
  nccl_double::set("nccl_version", 22809);
  CHECK(nccl_double::violations().empty());
  CHECK_FALSE(nccl_double::log_has("ncclAlltoAll"));
  CHECK_FALSE(nccl_double::log_has("ncclGather"));
  CHECK(nccl_double::log_has("ncclSend"));
}

TEST_CASE("nccl mapping: fp8 where NCCL refuses it", "[nccl_mapping]") {
  nccl_double::use();
  nccl::run_local_ranks({0}, options(), [&](Communicator& w) {
    Buffer x = w.alloc(4, DataType::float8_e4m3);
    w.all_reduce(
        x, x, ReduceOp::avg());  // one rank: issued as sum (NCCL's one-rank path rejects fp8 avg)
    CHECK_THROWS_WITH(w.all_reduce(x, x, ReduceOp::premul_sum(0.5)), Catch::Contains("one-rank"));
  });
  INFO(nccl_double::log());
  CHECK(nccl_double::violations().empty());
  CHECK(nccl_double::log_has("ncclAllReduce seq=0 count=4 type=10 op=0"));
  nccl_double::set("sm_major", 8);
  nccl::run_local_ranks(devices(2), options(), [&](Communicator& w) {
    Buffer x = w.alloc(4, DataType::float8_e5m2);
    CHECK_THROWS_WITH(w.all_reduce(x, x, ReduceOp::sum()), Catch::Contains("sm_90"));
    Buffer y = w.alloc(8, DataType::float8_e5m2);
    w.all_gather(x, y);  // not a reduction: allowed
  });
  nccl_double::set("sm_major", 9);
}

TEST_CASE("nccl mapping: loading reports what is missing in one clear error", "[nccl_mapping]") {
  CHECK_THROWS_WITH(
      nccl::load_api({"/nonexistent/libcudart.so.13", TWINCCL_NCCL_DOUBLE_PATH}),
      Catch::Contains("/nonexistent/libcudart.so.13") && Catch::Contains("TWINCCL_CUDART_LIBRARY"));
  CHECK_THROWS_AS(nccl::load_api({TWINCCL_NCCL_DOUBLE_PATH, "/nonexistent/libnccl.so.2"}),
                  BackendError);
  nccl_double::handle();
  nccl_double::set("nccl_version", 21805);
  CHECK_THROWS_WITH(nccl::load_api({TWINCCL_NCCL_DOUBLE_PATH, TWINCCL_NCCL_DOUBLE_PATH}),
                    Catch::Contains("NCCL 2.18.5") && Catch::Contains("NCCL 2.19.0"));
  nccl_double::set("nccl_version", 22809);
}

TEST_CASE("nccl mapping: a GPU census tells no GPU from a broken driver", "[nccl_mapping]") {
  nccl_double::use();
  nccl_double::set("device_count_error", cudaErrorNoDevice);
  CHECK(nccl::gpu_census().count == 0);
  CHECK(nccl::gpu_census().error.empty());
  nccl_double::set("device_count_error", cudaErrorInsufficientDriver);
  nccl_double::set("driver_version", 12040);
  CHECK_THAT(nccl::gpu_census().error, Catch::Contains("older than the CUDA runtime"));
  nccl_double::set("driver_version", 0);
  CHECK(nccl::gpu_census().error.empty());  // no driver at all: no GPU
  nccl_double::set("device_count_error", cudaErrorUnknown);
  nccl_double::set("driver_version", 13000);
  CHECK_FALSE(nccl::gpu_census().error.empty());
  CHECK_THROWS_AS(nccl::run_local_ranks({0}, options(), [](Communicator&) {}), BackendError);
  nccl_double::set("device_count_error", 0);
}

#endif  // TWINCCL_NCCL_DOUBLE_PATH
