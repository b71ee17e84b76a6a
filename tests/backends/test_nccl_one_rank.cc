// NCCL's one-rank reduction kernel leaves the tail of some calls unwritten (nccl/one_rank.h; seen
// on an H100 and an H200 with NCCL 2.28.9: 28 failures of gpu_checks, each the last element of an
// avg or premul_sum). The recording double (tests/backends/nccl_double) writes only what that
// kernel writes, so these checks fail when the backend issues such a call in one piece.
#if defined(TWINCCL_NCCL_DOUBLE_PATH)

#include <algorithm>
#include <catch2/catch.hpp>
#include <mutex>
#include <string>
#include <vector>

#include "nccl/launch.h"
#include "nccl/one_rank.h"
#include "nccl_double/control.h"
#include "twinccl/reduce_kernels.h"

using namespace twinccl;

namespace {

// Which elements oneRankReduce writes for `n` elements of `e` bytes (onerank.cu, 2.28.9), stated
// here block by block, independently of one_rank.cc's closed form.
std::vector<bool> kernel_writes(std::size_t n, std::size_t e) {
  std::vector<bool> w(n, false);
  if (n == 0) return w;
  const std::size_t grid = std::min<std::size_t>(32, (n * e + 16383) / 16384);
  const std::size_t pack = 16 / e;
  const std::size_t share = (n / grid + pack - 1) / pack * pack;
  for (std::size_t b = 0; b < grid; ++b) {
    for (std::size_t i = std::min(n, b * share); i < std::min(n, (b + 1) * share); ++i) w[i] = true;
  }
  return w;
}

}  // namespace

TEST_CASE("nccl one rank: the pieces cover every element once, each fully written by the kernel",
          "[nccl_mapping]") {
  std::vector<std::string> bad;
  for (std::size_t e : {std::size_t{1}, std::size_t{2}, std::size_t{4}, std::size_t{8}}) {
    std::vector<std::size_t> counts;
    for (std::size_t n = 0; n < 5000; ++n) counts.push_back(n);
    for (std::size_t n = 5000; n < 3000000; n = n * 11 / 10 + 7) counts.push_back(n);
    for (std::size_t n : {std::size_t{4099}, std::size_t{1048577}, std::size_t{65537 * 3},
                          (std::size_t{1} << 22) + 31})
      counts.push_back(n);
    for (std::size_t n : counts) {
      std::size_t next = 0;
      for (const nccl::OnePiece& p : nccl::one_rank_pieces(n, e, true)) {
        const auto w = kernel_writes(p.count, e);
        const bool whole = std::all_of(w.begin(), w.end(), [](bool x) { return x; });
        if (p.first != next || !whole) {
          bad.push_back("n=" + std::to_string(n) + " e=" + std::to_string(e) + " piece [" +
                        std::to_string(p.first) + ", +" + std::to_string(p.count) + ")");
        }
        next = p.first + p.count;
      }
      if (next != n)
        bad.push_back("n=" + std::to_string(n) + " e=" + std::to_string(e) + ": short");
    }
  }
  INFO((bad.empty() ? std::string() : bad.front()));
  CHECK(bad.empty());
  // Calls the kernel writes whole stay one call.
  CHECK(nccl::one_rank_pieces(1048576, 4, true).size() == 1);
  CHECK(nccl::one_rank_pieces(1048577, 4, false).size() == 1);
  CHECK(nccl::one_rank_pieces(1048577, 4, true).size() == 2);
}

TEST_CASE("nccl one rank: avg and premul_sum write every element, in and out of place",
          "[nccl_mapping]") {
  nccl_double::use();
  RunOptions o;
  o.backend = "nccl";
  o.timeout_s = 30;
  std::mutex mu;
  std::vector<std::string> wrong;
  try {
    nccl::run_local_ranks({0}, o, [&](Communicator& w) {
      for (DataType t :
           {DataType::float32, DataType::float64, DataType::bfloat16, DataType::int32}) {
        for (std::size_t n : {std::size_t{4099}, std::size_t{1048577}, std::size_t{700001}}) {
          std::vector<double> values(n), doubled(n);
          for (std::size_t i = 0; i < n; ++i) {
            values[i] = static_cast<double>(static_cast<int>(i % 13) - 6);
            doubled[i] = 2 * values[i];
          }
          std::vector<char> bytes(n * size_of(t)), twice(n * size_of(t));
          for (std::size_t i = 0; i < n; ++i) {
            store_element(t, bytes.data(), i, values[i]);
            store_element(t, twice.data(), i, doubled[i]);
          }
          const std::vector<char> poison(bytes.size(), static_cast<char>(0xa5));
          auto check = [&](const std::string& what, const Buffer& b,
                           const std::vector<char>& want) {
            std::vector<char> got(b.bytes());
            b.copy_to_host(got.data(), got.size());
            if (got != want) {
              std::lock_guard lock(mu);
              wrong.push_back(what + " " + std::string(name(t)) + " n=" + std::to_string(n));
            }
          };
          Buffer in = w.alloc(n, t), out = w.alloc(n, t);
          in.copy_from_host(bytes.data(), bytes.size());
          const bool floating = is_floating(t);
          for (ReduceOp op : {ReduceOp::avg(), ReduceOp::premul_sum(2.0)}) {
            const auto& want = op.kind == ReduceKind::avg ? bytes : twice;
            if (op.kind == ReduceKind::avg && !floating) continue;  // integer avg is a copy
            const std::string tag = std::string(to_string(op));
            out.copy_from_host(poison.data(), poison.size());
            w.all_reduce(in, out, op);
            check("all_reduce " + tag, out, want);
            out.copy_from_host(poison.data(), poison.size());
            w.reduce_scatter(in, out, op);
            check("reduce_scatter " + tag, out, want);
            out.copy_from_host(poison.data(), poison.size());
            w.reduce(in, out, op, 0);
            check("reduce " + tag, out, want);
            out.copy_from_host(poison.data(), poison.size());
            const std::size_t counts[] = {n};
            w.reduce_scatter_v(in.data(), out.data(), counts, {}, t, op);
            check("reduce_scatter_v " + tag, out, want);
            Buffer same = w.alloc(n, t);  // in place: no element scaled twice
            same.copy_from_host(bytes.data(), bytes.size());
            w.all_reduce(same, same, op);
            check("all_reduce in place " + tag, same, want);
          }
        }
      }
    });
  } catch (const std::exception& e) {
    FAIL_CHECK(e.what() << "\n" << nccl_double::violations());
  }
  INFO((wrong.empty() ? std::string() : wrong.front()));
  CHECK(wrong.empty());
  INFO(nccl_double::violations());
  CHECK(nccl_double::violations().empty());
}

#endif  // TWINCCL_NCCL_DOUBLE_PATH
