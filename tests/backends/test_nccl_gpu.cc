// GPU checks of the NCCL backend, tagged [gpu]. Compiled only into the separate `gpu_checks`
// program (tests/backends/gpu/main.cc, registered in CTest with SKIP_RETURN_CODE 77, label gpu),
// which exits 77 - "Skipped" in CTest, never "Passed" - when no GPU is visible. In tests_backends
// this file compiles to nothing (TWINCCL_GPU_CHECKS is not defined there).
//
// On one GPU: world size 1 for every collective x every dtype x counts {0, 1, 7, 4099, 2^20+1}
// (NCCL's one-rank path: local copies, no collective kernel; values are checked bit for bit),
// async Work, groups, split, buffers. fp8 avg at one rank is issued as sum (NCCL's one-rank path
// rejects fp8 scaling) and fp8 premul_sum at one rank is refused; below sm_90 fp8 reductions are
// refused as NCCL does.
// Two ranks on the one GPU only with NCCL >= 2.30 and NCCL_MULTI_RANK_GPU_ENABLE=1 (tag
// [multi_rank]; main.cc leaves it out, saying so, on older NCCL).
#if defined(TWINCCL_GPU_CHECKS)

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "nccl/communicator.h"
#include "nccl/launch.h"
#include "nccl/loader.h"
#include "twinccl/errors.h"
#include "twinccl/float_formats.h"

using namespace twinccl;

namespace {

using Bytes = std::vector<unsigned char>;

template <class T>
void put(Bytes& out, std::size_t i, T v) {
  std::memcpy(out.data() + i * sizeof(T), &v, sizeof(T));
}

// Values in `t`'s storage format. Callers use small integers, exact in every format.
Bytes encode(DataType t, const std::vector<double>& v) {
  Bytes out(v.size() * size_of(t));
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double x = v[i];
    switch (t) {
      case DataType::int8:
        put(out, i, static_cast<std::int8_t>(x));
        break;
      case DataType::uint8:
        put(out, i, static_cast<std::uint8_t>(x));
        break;
      case DataType::int32:
        put(out, i, static_cast<std::int32_t>(x));
        break;
      case DataType::uint32:
        put(out, i, static_cast<std::uint32_t>(x));
        break;
      case DataType::int64:
        put(out, i, static_cast<std::int64_t>(x));
        break;
      case DataType::uint64:
        put(out, i, static_cast<std::uint64_t>(x));
        break;
      case DataType::float16:
        put(out, i, fp::to_float16(x));
        break;
      case DataType::bfloat16:
        put(out, i, fp::to_bfloat16(x));
        break;
      case DataType::float32:
        put(out, i, static_cast<float>(x));
        break;
      case DataType::float64:
        put(out, i, x);
        break;
      case DataType::float8_e4m3:
        put(out, i, fp::to_float8_e4m3(x));
        break;
      case DataType::float8_e5m2:
        put(out, i, fp::to_float8_e5m2(x));
        break;
    }
  }
  return out;
}

bool is_unsigned(DataType t) {
  return t == DataType::uint8 || t == DataType::uint32 || t == DataType::uint64;
}

// Element i: a small integer in [-6, 6] ([0, 12] for unsigned types), different per seed.
std::vector<double> pattern(DataType t, std::size_t n, int seed) {
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    const int k = static_cast<int>((i * 7 + static_cast<std::size_t>(seed) * 5) % 13);
    v[i] = is_unsigned(t) ? k : k - 6;
  }
  return v;
}

Bytes device_bytes(const Buffer& b) {
  Bytes out(b.bytes());
  b.copy_to_host(out.data(), out.size());
  return out;
}

std::string element_hex(const Bytes& b, std::size_t i, std::size_t size) {
  std::string out;
  static const char* digits = "0123456789abcdef";
  for (std::size_t k = size; k-- > 0;) {  // little-endian: most significant byte first
    const unsigned char c = b[i * size + k];
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

// "" when equal; else how many elements differ and the first and last of them, in hex, so a
// failure over a million elements prints one line instead of both vectors.
std::string difference(const Bytes& got, const Bytes& expect, DataType t) {
  if (got == expect) return "";
  if (got.size() != expect.size()) {
    return "sizes differ: got " + std::to_string(got.size()) + " bytes, expected " +
           std::to_string(expect.size());
  }
  const std::size_t e = size_of(t), n = got.size() / e;
  std::size_t differ = 0, first = n, last = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::memcmp(got.data() + i * e, expect.data() + i * e, e) == 0) continue;
    ++differ;
    first = std::min(first, i);
    last = i;
  }
  return std::to_string(differ) + " of " + std::to_string(n) + " elements differ; first [" +
         std::to_string(first) + "] got 0x" + element_hex(got, first, e) + " expected 0x" +
         element_hex(expect, first, e) + ", last [" + std::to_string(last) + "] got 0x" +
         element_hex(got, last, e) + " expected 0x" + element_hex(expect, last, e);
}

Buffer filled(Communicator& comm, DataType t, const std::vector<double>& values) {
  Buffer b = comm.alloc(values.size(), t);
  const Bytes bytes = encode(t, values);
  b.copy_from_host(bytes.data(), bytes.size());
  return b;
}

RunOptions options() {
  RunOptions o;
  o.backend = "nccl";
  o.timeout_s = 120;
  return o;
}

const std::size_t kCounts[] = {0, 1, 7, 4099, (std::size_t{1} << 20) + 1};

int sm_major() {
  int major = 0;
  (void)nccl::api().cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  return major;
}

}  // namespace

TEST_CASE("nccl gpu: world size 1, every collective, every dtype, values checked", "[gpu]") {
  nccl::run_local_ranks({0}, options(), [](Communicator& world) {
    REQUIRE(world.size() == 1);
    REQUIRE(world.rank() == 0);
    REQUIRE(world.backend() == "nccl");
    for (DataType t : kAllDataTypes) {
      for (std::size_t n : kCounts) {
        INFO("dtype " << name(t) << ", count " << n);
        const auto values = pattern(t, n, 1);
        const Bytes expect = encode(t, values);
        Buffer in = filled(world, t, values);
        Buffer out = world.alloc(n, t);
        const ReduceOp ops[] = {ReduceOp::sum(), ReduceOp::prod(), ReduceOp::min(), ReduceOp::max(),
                                ReduceOp::avg()};
        const bool fp8 = t == DataType::float8_e4m3 || t == DataType::float8_e5m2;
        if (fp8 && sm_major() < 9) {  // NCCL refuses fp8 reductions below sm_90; so do we
          CHECK_THROWS_AS(world.all_reduce(in, out, ReduceOp::sum()), InvalidArgument);
          continue;
        }
        // After every call: the output holds what it should and the input is untouched. The
        // output is poisoned (0xa5) before each call so a value left from the previous call
        // cannot pass for a written one.
        const Bytes poison(n * size_of(t), 0xa5);
        auto poisoned = [&](Buffer& b) {
          if (!poison.empty()) b.copy_from_host(poison.data(), poison.size());
        };
        auto expect_output = [&](const char* what, const Buffer& b, const Bytes& want) {
          INFO(what);
          CHECK(difference(device_bytes(b), want, t) == "");
          CHECK(difference(device_bytes(in), expect, t) == "");  // the input is not written
        };
        for (ReduceOp op : ops) {
          INFO("op " << to_string(op));
          poisoned(out);
          world.all_reduce(in, out, op);
          expect_output("all_reduce", out, expect);
          poisoned(out);
          world.reduce_scatter(in, out, op);
          expect_output("reduce_scatter", out, expect);
          poisoned(out);
          world.reduce(in, out, op, 0);
          expect_output("reduce", out, expect);
        }
        std::vector<double> doubled(values);
        for (double& x : doubled) x *= 2;
        if (fp8) {  // NCCL's one-rank path cannot scale fp8: refused with the reason
          CHECK_THROWS_AS(world.all_reduce(in, out, ReduceOp::premul_sum(2.0)), InvalidArgument);
        } else {
          poisoned(out);
          world.all_reduce(in, out, ReduceOp::premul_sum(2.0));
          expect_output("all_reduce premul_sum(2)", out, encode(t, doubled));
        }
        Buffer inplace = filled(world, t, values);
        world.all_reduce(inplace, inplace, ReduceOp::sum());
        expect_output("all_reduce in place", inplace, expect);

        auto copy_checks = [&](const char* what, auto&& call) {
          Buffer dst = world.alloc(n, t);
          poisoned(dst);
          call(dst);
          expect_output(what, dst, expect);
        };
        copy_checks("all_gather", [&](Buffer& dst) { world.all_gather(in, dst); });
        copy_checks("broadcast",
                    [&](Buffer& dst) { world.broadcast(in.data(), dst.data(), n, t, 0); });
        copy_checks("all_to_all", [&](Buffer& dst) { world.all_to_all(in, dst); });
        copy_checks("gather", [&](Buffer& dst) { world.gather(in.data(), dst.data(), n, t, 0); });
        copy_checks("scatter", [&](Buffer& dst) { world.scatter(in.data(), dst.data(), n, t, 0); });
        copy_checks("send/recv to self in a group", [&](Buffer& dst) {
          Group group(world);
          world.send(in, 0);
          world.recv(dst, 0);
        });
        const std::size_t counts[] = {n};
        copy_checks("all_gather_v",
                    [&](Buffer& dst) { world.all_gather_v(in.data(), dst.data(), counts, {}, t); });
        copy_checks("all_to_all_v", [&](Buffer& dst) {
          world.all_to_all_v(in.data(), counts, {}, dst.data(), counts, {}, t);
        });
        copy_checks("gather_v",
                    [&](Buffer& dst) { world.gather_v(in.data(), dst.data(), counts, {}, t, 0); });
        copy_checks("scatter_v",
                    [&](Buffer& dst) { world.scatter_v(in.data(), dst.data(), counts, {}, t, 0); });
        copy_checks("reduce_scatter_v", [&](Buffer& dst) {
          world.reduce_scatter_v(in.data(), dst.data(), counts, {}, t, ReduceOp::sum());
        });
      }
    }
    world.barrier();
  });
}

TEST_CASE("nccl gpu: async work, wait_for, test, groups", "[gpu]") {
  nccl::run_local_ranks({0}, options(), [](Communicator& world) {
    const std::size_t n = std::size_t{1} << 22;
    const auto values = pattern(DataType::float32, n, 3);
    Buffer in = filled(world, DataType::float32, values);
    Buffer out = world.alloc(n, DataType::float32);
    Work w = world.all_reduce(in, out, ReduceOp::sum(), {.async_op = true});
    CHECK(w.wait_for(std::chrono::seconds(30)));
    CHECK(w.test());
    w.wait();
    CHECK(difference(device_bytes(out), encode(DataType::float32, values), DataType::float32) ==
          "");
    // copy_out is ordered after an async op on the same communicator without an explicit wait.
    Buffer out2 = world.alloc(n, DataType::float32);
    world.all_gather(in, out2, {.async_op = true});
    CHECK(difference(device_bytes(out2), encode(DataType::float32, values), DataType::float32) ==
          "");

    world.group_start();
    Work inside = world.all_reduce(in, out, ReduceOp::max(), {.async_op = true});
    CHECK_FALSE(inside.test());
    CHECK_THROWS_AS(inside.wait(), InvalidArgument);  // the group is still open
    world.broadcast(in.data(), out2.data(), n, DataType::float32, 0, {.async_op = true});
    Work group = world.group_end({.async_op = true});
    group.wait();
    inside.wait();  // the group ended: its ops are done too
    CHECK(difference(device_bytes(out2), encode(DataType::float32, values), DataType::float32) ==
          "");
    CHECK_THROWS_AS(world.group_end(), InvalidArgument);
  });
}

TEST_CASE("nccl gpu: split, subcommunicator, buffers, errors", "[gpu]") {
  nccl::run_local_ranks({0}, options(), [](Communicator& world) {
    CHECK(world.split(kNoColor, 0) == nullptr);
    auto sub = world.split(0, 0, "sub");
    REQUIRE(sub != nullptr);
    CHECK(sub->size() == 1);
    CHECK(sub->name() == "sub");
    const auto values = pattern(DataType::int32, 1000, 5);
    Buffer in = filled(*sub, DataType::int32, values);
    Buffer out = sub->alloc(1000, DataType::int32);
    sub->all_reduce(in, out, ReduceOp::sum());
    CHECK(difference(device_bytes(out), encode(DataType::int32, values), DataType::int32) == "");
    // A communicator made by its members only (here the one rank): ncclGetUniqueId, then init.
    auto solo = world.subcommunicator(std::vector<int>{0}, "solo");
    REQUIRE(solo != nullptr);
    CHECK(solo->name() == "solo");
    Buffer solo_out = solo->alloc(1000, DataType::int32);
    solo->all_reduce(in, solo_out, ReduceOp::sum());
    CHECK(difference(device_bytes(solo_out), encode(DataType::int32, values), DataType::int32) ==
          "");

    Buffer b = world.alloc(16, DataType::float64);
    CHECK(b.memory_kind() == MemoryKind::device);
    CHECK(device_bytes(b) == Bytes(16 * 8, 0));  // zero-filled
    CHECK_THROWS_AS(b.host_span<double>(), InvalidArgument);
    Buffer empty = world.alloc(0, DataType::float32);
    CHECK(empty.empty());
    world.all_reduce(empty, empty, ReduceOp::sum());
    // premul_sum with a non-integer scalar: halves of small integers are exact in float32.
    const auto halves_in = pattern(DataType::float32, 33, 2);
    std::vector<double> halves(halves_in);
    for (double& x : halves) x *= 0.5;
    Buffer h = filled(world, DataType::float32, halves_in);
    world.all_reduce(h, h, ReduceOp::premul_sum(0.5));
    CHECK(difference(device_bytes(h), encode(DataType::float32, halves), DataType::float32) == "");
  });
}

TEST_CASE("nccl gpu: two ranks on one GPU (NCCL >= 2.30, NCCL_MULTI_RANK_GPU_ENABLE=1)",
          "[gpu][multi_rank]") {
  REQUIRE(nccl::runtime_nccl_version() >= 23000);
  ::setenv("NCCL_MULTI_RANK_GPU_ENABLE", "1", 1);  // test process only; read by NCCL at init
  ::setenv("NCCL_MAX_CTAS", "4", 0);               // leave SMs for the other rank's kernels
  std::mutex mutex;
  std::vector<std::string> failures;
  auto fail = [&](const std::string& what) {
    std::lock_guard lock(mutex);
    failures.push_back(what);
  };
  nccl::run_local_ranks({0, 0}, options(), [&](Communicator& world) {
    const int r = world.rank();
    // Every buffer is allocated (and filled) before the first collective: cudaMalloc/cudaFree
    // synchronise the device and would deadlock against the peer rank's spinning kernel.
    struct Case {
      DataType t;
      std::size_t n;
      std::vector<double> mine, other;
      Buffer in, out, gathered, uneven;
    };
    std::vector<Case> cases;
    for (DataType t :
         {DataType::float32, DataType::bfloat16, DataType::int64, DataType::float8_e4m3}) {
      for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{65537}}) {
        Case c{t, n, pattern(t, n, r), pattern(t, n, 1 - r), {}, {}, {}, {}};
        c.in = filled(world, t, c.mine);
        c.out = world.alloc(n, t);
        c.gathered = world.alloc(2 * n, t);
        c.uneven = world.alloc(n + n / 2, t);
        cases.push_back(std::move(c));
      }
    }
    world.barrier();
    for (Case& c : cases) {
      const DataType t = c.t;
      const std::size_t n = c.n;
      const auto& mine = c.mine;
      const auto& other = c.other;
      const std::string tag =
          std::string(name(t)) + " n=" + std::to_string(n) + " rank " + std::to_string(r);
      world.all_reduce(c.in, c.out, ReduceOp::sum());
      std::vector<double> sum(n);
      for (std::size_t i = 0; i < n; ++i) sum[i] = mine[i] + other[i];
      if (device_bytes(c.out) != encode(t, sum)) fail("all_reduce " + tag);
      world.all_gather(c.in, c.gathered);
      std::vector<double> both = r == 0 ? mine : other;
      const auto& second = r == 0 ? other : mine;
      both.insert(both.end(), second.begin(), second.end());
      if (device_bytes(c.gathered) != encode(t, both)) fail("all_gather " + tag);
      const std::size_t counts[] = {n, n / 2};
      world.all_gather_v(c.in.data(), c.uneven.data(), counts, {}, t);
      std::vector<double> expect_v = r == 0 ? mine : other;
      const auto& rank1 = r == 1 ? mine : other;
      expect_v.insert(expect_v.end(), rank1.begin(),
                      rank1.begin() + static_cast<std::ptrdiff_t>(n / 2));
      if (device_bytes(c.uneven) != encode(t, expect_v)) fail("all_gather_v " + tag);
    }
    // Communicators made mid-run allocate nothing (rank_scratch.h): a split, a members-only
    // group in the other order, and their barriers and all_reduces on the buffers made above.
    auto both = world.split(0, r, "both");
    auto pair = world.subcommunicator(std::vector<int>{1, 0}, "pair");
    both->barrier();
    pair->barrier();
    Case& c = cases[2];  // float32, n=7
    both->all_reduce(c.in, c.out, ReduceOp::sum());
    pair->all_reduce(c.out, c.out, ReduceOp::sum());
    std::vector<double> twice(c.n);
    for (std::size_t i = 0; i < c.n; ++i) twice[i] = 2 * (c.mine[i] + c.other[i]);
    if (device_bytes(c.out) != encode(c.t, twice)) fail("split + subcommunicator all_reduce");
    world.barrier();  // no rank frees its buffers while the other still runs a collective
  });
  for (const auto& f : failures) FAIL_CHECK(f);
  CHECK(failures.empty());
}

#endif  // TWINCCL_GPU_CHECKS
