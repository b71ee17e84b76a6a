// The public API used carelessly, without a communicator: Work::wait_for with extreme timeouts,
// Buffer/Memory copies with null host pointers and overflowing ranges, the chunk helpers with bad
// ranks/dims/sizes, and a forced algorithm checked by validate. Each must be a typed error
// naming the value (or the right answer), never UB, a crash or a silent wrong result.
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <source_location>
#include <string>
#include <vector>

#include "twinccl/buffer.h"
#include "twinccl/chunk_scatter.h"
#include "twinccl/errors.h"
#include "twinccl/operation.h"
#include "twinccl/work.h"

using namespace twinccl;
using Catch::Matchers::Contains;

namespace {

constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();

// A WorkState that finishes after `finish_after` and records the timeout it was given.
class RecordingState final : public WorkState {
 public:
  void wait() override {}
  bool test() override { return false; }
  bool wait_for(std::chrono::nanoseconds timeout) override {
    given = timeout;
    return timeout >= finish_after;
  }
  std::chrono::nanoseconds given{-1};
  std::chrono::nanoseconds finish_after = std::chrono::seconds(1);
};

template <class Duration>
std::chrono::nanoseconds passed_for(Duration timeout, bool* finished = nullptr) {
  auto state = std::make_shared<RecordingState>();
  Work w(state);
  bool done = w.wait_for(timeout);
  if (finished != nullptr) *finished = done;
  return state->given;
}

}  // namespace

TEST_CASE("Work::wait_for: huge timeouts wait long instead of overflowing, negative is zero",
          "[core][api][work]") {
  bool finished = false;
  // Before: duration_cast of hours::max() to nanoseconds overflowed (UB), and the emulator's
  // now() + timeout overflowed again: wait_for returned false at once.
  CHECK(passed_for(std::chrono::hours::max(), &finished) == kLongestWaitFor);
  CHECK(finished);
  CHECK(passed_for(std::chrono::nanoseconds::max()) == kLongestWaitFor);
  CHECK(passed_for(std::chrono::duration<double>(std::numeric_limits<double>::infinity())) ==
        kLongestWaitFor);
  CHECK(passed_for(std::chrono::seconds(-5), &finished) == std::chrono::nanoseconds(0));
  CHECK_FALSE(finished);
  CHECK(passed_for(std::chrono::milliseconds(1500)) == std::chrono::milliseconds(1500));
  CHECK(passed_for(std::chrono::duration<double>(0.25)) == std::chrono::milliseconds(250));
  CHECK_THROWS_WITH(
      passed_for(std::chrono::duration<double>(std::numeric_limits<double>::quiet_NaN())),
      Contains("Work::wait_for") && Contains("NaN"));
  Work done;  // a default (already completed) Work
  CHECK(done.wait_for(std::chrono::hours::max()));
}

TEST_CASE("Buffer and Memory copies: null host pointers and overflowing ranges are refused",
          "[core][api][buffer]") {
  Buffer b = Buffer::host(4, DataType::float32);
  // Before: memmove from/to a null pointer (a crash).
  CHECK_THROWS_WITH(b.copy_from_host(nullptr, 16),
                    Contains("Buffer::copy_from_host") && Contains("null") && Contains("16 bytes"));
  CHECK_THROWS_WITH(b.copy_to_host(nullptr, 8),
                    Contains("Buffer::copy_to_host") && Contains("null") && Contains("8 bytes"));
  CHECK_NOTHROW(b.copy_from_host(nullptr, 0));
  auto dst = allocate_host_memory(16), src = allocate_host_memory(16);
  // Before: src_offset + bytes wrapped around, passed the check, and 8 bytes before the source
  // allocation were read.
  CHECK_THROWS_WITH(dst->copy_from(0, *src, kMax, 8), Contains("source range") &&
                                                          Contains("overflows size_t") &&
                                                          Contains("16-byte allocation"));
  CHECK_THROWS_WITH(dst->copy_from(8, *src, 0, 9),
                    Contains("destination") || Contains("outside the 16-byte allocation"));
  CHECK_THROWS_WITH(dst->copy_in(8, "abcdefgh", kMax),
                    Contains("[8, 8 + ") && Contains("overflows size_t"));
  CHECK_THROWS_WITH(b.slice(2, kMax), Contains("Buffer::slice") && Contains("overflows size_t") &&
                                          Contains("a buffer of 4 elements"));
}

TEST_CASE("chunk helpers: bad ranks, dims and sizes are typed errors, huge sizes exact",
          "[core][api][chunks]") {
  // Before: a division by zero (nranks 0) and std::length_error (nranks -1).
  CHECK_THROWS_AS(even_chunk_sizes(10, 0), InvalidArgument);
  CHECK_THROWS_WITH(even_chunk_sizes(10, -1), Contains("nranks=-1"));
  // Before: (size + n - 1) wrapped and every chunk was 0.
  std::vector<std::size_t> huge = even_chunk_sizes(kMax, 3);
  REQUIRE(huge.size() == 3);
  CHECK(huge[0] == kMax / 3);
  CHECK(huge[0] + huge[1] + huge[2] == kMax);
  CHECK(even_chunk_sizes(10, 4) == std::vector<std::size_t>{3, 3, 3, 1});
  CHECK(even_chunk_sizes(2, 4) == std::vector<std::size_t>{1, 1, 0, 0});
  std::vector<std::size_t> shape{10, 4}, chunks{3, 7};
  CHECK(chunk_shape(shape, chunks, 0, 1) == std::vector<std::size_t>{7, 4});
  // Before: an out-of-bounds read (rank) and std::out_of_range (dim).
  CHECK_THROWS_WITH(chunk_shape(shape, chunks, 0, 2), Contains("rank=2 out of range [0, 2)"));
  CHECK_THROWS_WITH(chunk_shape(shape, chunks, 0, -1), Contains("rank=-1"));
  CHECK_THROWS_WITH(chunk_shape(shape, chunks, 5, 0), Contains("dim=5") && Contains("2 dim"));
}

TEST_CASE("validate: a forced algorithm that does not exist for the call names the call site",
          "[core][api][validate]") {
  float x[4] = {};
  OpDesc op;
  op.kind = OpKind::all_reduce;
  op.send = x;
  op.recv = x;
  op.count = 4;
  op.algorithm = "warp-drive";
  op.where = std::source_location::current();
  // Before: accepted here; the emulator threw later without the call, rank or site, and a
  // forced algorithm on send/recv was silently ignored.
  CHECK_THROWS_WITH(validate(op, 1, 4, "world"),
                    Contains("all_reduce on comm 'world' rank 1 (test_api_misuse.cc:") &&
                        Contains("unknown algorithm 'warp-drive'") && Contains("ring"));
  op.kind = OpKind::send;
  op.peer = 0;
  op.algorithm = "ring";
  CHECK_THROWS_WITH(validate(op, 1, 4, "world"),
                    Contains("send on comm 'world' rank 1") && Contains("does not apply to send"));
  op.kind = OpKind::all_reduce;
  CHECK_NOTHROW(validate(op, 1, 4, "world"));
}

TEST_CASE("validate: uneven calls whose recv displacements overlap are refused",
          "[core][api][validate]") {
  float send[4] = {}, recv[16] = {};
  OpDesc op;
  op.kind = OpKind::all_gather_v;
  op.send = send;
  op.recv = recv;
  op.recv_counts = {2, 3, 2};
  op.recv_displs = {0, 6, 1};  // rank 2's block [1, 3) lands on rank 0's [0, 2)
  op.where = std::source_location::current();
  // Before: accepted; two ranks' data were written to the same elements in no defined order.
  CHECK_THROWS_WITH(validate(op, 1, 3, "world"),
                    Contains("all_gather_v on comm 'world' rank 1") &&
                        Contains("rank 0's block [0, 2) and rank 2's block [1, 3)"));
  op.recv_displs = {0, 6, 2};  // touching, not overlapping
  CHECK_NOTHROW(validate(op, 1, 3, "world"));
  op.recv_counts = {2, 0, 2};
  op.recv_displs = {0, 1, 2};  // an empty block may sit anywhere
  CHECK_NOTHROW(validate(op, 1, 3, "world"));
  op.kind = OpKind::all_to_all_v;
  op.send_counts = {1, 1, 1};
  op.recv_counts = {4, 4, 4};
  op.recv_displs = {0, 4, 7};
  CHECK_THROWS_WITH(validate(op, 0, 3, "world"), Contains("rank 1's block [4, 8) and rank 2's"));
  op.kind = OpKind::gather_v;  // only the root receives
  op.root = 2;
  op.recv_counts = {1, 1, 1};
  op.recv_displs = {0, 0, 0};
  CHECK_NOTHROW(validate(op, 0, 3, "world"));
  CHECK_THROWS_WITH(validate(op, 2, 3, "world"), Contains("over each other"));
}

TEST_CASE("validate: uneven counts or displacements that overflow name the entry and its values",
          "[core][api][validate]") {
  float send[4] = {}, recv[16] = {};
  OpDesc op;
  op.kind = OpKind::all_gather_v;
  op.send = send;
  op.recv = recv;
  op.recv_counts = {1, kMax};
  op.where = std::source_location::current();
  // Before: "all_gather_v: counts/displacements overflow", naming neither entry nor value.
  CHECK_THROWS_WITH(validate(op, 0, 2, "world"),
                    Contains("all_gather_v on comm 'world' rank 0") &&
                        Contains("recv_counts[1] = 18446744073709551615 after 1 elements of the "
                                 "earlier recv_counts (packed) ends past SIZE_MAX elements"));
  op.kind = OpKind::reduce_scatter_v;
  op.op = ReduceOp::sum();
  op.recv_counts = {1, 1};
  op.send_displs = {kMax, 0};
  CHECK_THROWS_WITH(validate(op, 1, 2, "world"),
                    Contains("recv_counts[0] = 1 at send_displs[0] = 18446744073709551615"));
}
