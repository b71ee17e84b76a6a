// Misuse scenarios 1-13 (docs/misuse.md): ranks that disagree about an operation. Every rank of
// the meeting gets the same MismatchError naming the communicator, the sequence number, the ranks
// on each side, what they passed and their call sites.
#include <array>
#include <chrono>
#include <numeric>
#include <thread>

#include "test_misuse_support.h"

using namespace twinccl;
using namespace twinccl::testing;
using Catch::Matchers::Contains;

namespace {

void all_got(const std::vector<RankOutcome>& out, const std::string& type,
             const std::vector<std::string>& parts) {
  for (std::size_t r = 0; r < out.size(); ++r) {
    INFO("rank " << r << ": " << out[r].type << ": " << out[r].message);
    CHECK(out[r].type == type);
    for (const auto& p : parts) CHECK_THAT(out[r].message, Contains(p));
  }
}

}  // namespace

TEST_CASE("misuse 01: all_reduce count differs on one rank", "[emu][misuse]") {
  int n = GENERATE(2, 3, 7);
  std::array<int, 2> line{};
  auto out = misuse_run(n, [&](Communicator& c) {
    std::vector<float> x(64);
    if (c.rank() == 1) {
      line[1] = __LINE__ + 1;
      c.all_reduce(x.data(), x.data(), 32, DataType::float32, ReduceOp::sum());
    } else {
      if (c.rank() == 0) line[0] = __LINE__ + 1;
      c.all_reduce(x.data(), x.data(), 64, DataType::float32, ReduceOp::sum());
    }
  });
  all_got(out, "MismatchError",
          {"all_reduce #0 on comm 'world'", "ranks disagree on count",
           "rank 1 (" + site(__FILE__, line[1]) + ") passed 32",
           site(__FILE__, line[0]) + ") passed 64"});
}

TEST_CASE("misuse 02: data type differs", "[emu][misuse]") {
  auto out = misuse_run(3, [](Communicator& c) {
    std::vector<std::int32_t> x(8);
    c.all_reduce(x.data(), x.data(), 8, c.rank() == 2 ? DataType::int32 : DataType::float32,
                 ReduceOp::sum());
  });
  all_got(
      out, "MismatchError",
      {"ranks disagree on the data type", "rank 2", "passed int32", "ranks 0-1", "passed float32"});
}

TEST_CASE("misuse 03: reduce op differs", "[emu][misuse]") {
  auto out = misuse_run(4, [](Communicator& c) {
    std::vector<float> x(8);
    c.all_reduce(x.data(), x.data(), 8, DataType::float32,
                 c.rank() == 0 ? ReduceOp::max() : ReduceOp::sum());
  });
  all_got(out, "MismatchError",
          {"ranks disagree on the reduce op", "rank 0", "passed max", "ranks 1-3", "passed sum"});
}

TEST_CASE("misuse 04: broadcast root differs", "[emu][misuse]") {
  auto out = misuse_run(3, [](Communicator& c) {
    std::vector<float> x(8);
    c.broadcast(x.data(), x.data(), 8, DataType::float32, c.rank() == 2 ? 1 : 0);
  });
  all_got(
      out, "MismatchError",
      {"broadcast #0", "ranks disagree on root", "rank 2", "passed 1", "ranks 0-1", "passed 0"});
}

TEST_CASE("misuse 05: ranks call different collectives", "[emu][misuse]") {
  auto out = misuse_run(2, [](Communicator& c) {
    std::vector<float> x(8);
    if (c.rank() == 0)
      c.all_reduce(x.data(), x.data(), 8, DataType::float32, ReduceOp::sum());
    else
      c.broadcast(x.data(), x.data(), 8, DataType::float32, 0);
  });
  all_got(out, "MismatchError",
          {"#0 on comm 'world'", "ranks disagree on the operation", "called all_reduce",
           "called broadcast", "same order"});
}

TEST_CASE("misuse 06: the order of operations differs (second op named)", "[emu][misuse]") {
  auto out = misuse_run(3, [](Communicator& c) {
    std::vector<float> x(8), y(24);
    c.barrier();
    if (c.rank() == 1) {
      c.all_gather(x.data(), y.data(), 8, DataType::float32);
      c.all_reduce(x.data(), x.data(), 8, DataType::float32, ReduceOp::sum());
    } else {
      c.all_reduce(x.data(), x.data(), 8, DataType::float32, ReduceOp::sum());
      c.all_gather(x.data(), y.data(), 8, DataType::float32);
    }
  });
  all_got(out, "MismatchError", {"#1 on comm 'world'", "rank 1", "all_gather", "all_reduce"});
}

TEST_CASE("misuse 07: split on some ranks, barrier on others", "[emu][misuse]") {
  auto out = misuse_run(3, [](Communicator& c) {
    if (c.rank() == 0)
      c.barrier();
    else
      (void)c.split(0, c.rank());
  });
  all_got(out, "MismatchError", {"#0 on comm 'world'", "rank 0", "called barrier", "called split"});
}

// The barrier rank arriving last runs the meeting for everyone (a small collective is led by its
// last rank); the split ranks must still get the MismatchError and return. This order used to
// hang: the split ranks waited for a count of ranks done reading that a led meeting never raises.
TEST_CASE("misuse 07b: split on some ranks and barrier on others with either rank last",
          "[emu][misuse]") {
  const bool barrier_last = GENERATE(true, false);
  INFO((barrier_last ? "the barrier rank arrives last" : "a split rank arrives last"));
  auto out = misuse_run(3, [&](Communicator& c) {
    bool late = barrier_last ? c.rank() == 0 : c.rank() == 2;
    if (late) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    if (c.rank() == 0)
      c.barrier();
    else
      (void)c.split(0, c.rank());
  });
  all_got(out, "MismatchError", {"#0 on comm 'world'", "rank 0", "called barrier", "called split"});
}

TEST_CASE("misuse 08: count differs on a sub-communicator (its name and seq)", "[emu][misuse]") {
  auto out = misuse_run(4, [](Communicator& c) {
    auto half = c.split(c.rank() % 2, c.rank(), "half");
    std::vector<float> s(16), r(8);
    half->barrier();
    std::size_t count = c.rank() == 3 ? 4 : 8;
    half->reduce_scatter(s.data(), r.data(), count, DataType::float32, ReduceOp::sum());
  });
  // Ranks 1 and 3 form one 'half' and disagree; ranks 0 and 2 form the other and are fine.
  for (int r : {1, 3}) {
    INFO(out[static_cast<std::size_t>(r)].message);
    CHECK(out[static_cast<std::size_t>(r)].type == "MismatchError");
    CHECK_THAT(out[static_cast<std::size_t>(r)].message,
               Contains("reduce_scatter #1 on comm 'half'") &&
                   Contains("ranks disagree on count") && Contains("rank 1 (") &&
                   Contains("passed 4") && Contains("passed 8"));
  }
  // The failing ranks abort the world: the other half finished, or was aborted.
  for (int r : {0, 2})
    CHECK((out[static_cast<std::size_t>(r)].type.empty() ||
           out[static_cast<std::size_t>(r)].type == "AbortedError"));
}

TEST_CASE("misuse 09: all_gather_v counts differ", "[emu][misuse]") {
  auto out = misuse_run(3, [](Communicator& c) {
    std::vector<std::size_t> counts{1, 2, 3};
    if (c.rank() == 0) counts = {1, 2, 4};
    std::vector<float> s(8), r(8);
    c.all_gather_v(s.data(), r.data(), counts, {}, DataType::float32);
  });
  all_got(out, "MismatchError",
          {"all_gather_v #0", "ranks disagree on counts", "[1,2,4]", "[1,2,3]"});
}

TEST_CASE("misuse 10: all_to_all_v send and recv counts do not pair", "[emu][misuse]") {
  auto out = misuse_run(2, [](Communicator& c) {
    std::vector<std::size_t> send{2, 2}, recv{2, 2};
    if (c.rank() == 1) send = {3, 2};  // rank 1 sends 3 to rank 0, which expects 2
    std::vector<float> s(8), r(8);
    c.all_to_all_v(s.data(), send, {}, r.data(), recv, {}, DataType::float32);
  });
  all_got(out, "MismatchError",
          {"all_to_all_v #0", "rank 1", "sends 3 elements to rank 0", "expects 2"});
}

TEST_CASE("misuse 11: a forced algorithm differs", "[emu][misuse]") {
  auto out = misuse_run(4, [](Communicator& c) {
    std::vector<float> x(8);
    c.all_reduce(x.data(), x.data(), 8, DataType::float32, ReduceOp::sum(),
                 {.algorithm = c.rank() == 0 ? "ring" : "tree"});
  });
  all_got(out, "MismatchError", {"ranks disagree on the algorithm", "'ring'", "'tree'"});
}

TEST_CASE("misuse 12: send and recv counts do not pair", "[emu][misuse]") {
  std::array<int, 2> line{};
  auto out = misuse_run(2, [&](Communicator& c) {
    std::vector<float> x(8);
    if (c.rank() == 0) {
      line[0] = __LINE__ + 1;
      c.send(x.data(), 4, DataType::float32, 1);
    } else {
      line[1] = __LINE__ + 1;
      c.recv(x.data(), 8, DataType::float32, 0);
    }
  });
  all_got(out, "MismatchError",
          {"send/recv mismatch on comm 'world'",
           "rank 0 (" + site(__FILE__, line[0]) + ") sends 4 x float32",
           "rank 1 (" + site(__FILE__, line[1]) + ") receives 8 x float32"});
}

TEST_CASE("misuse 13: send and recv data types do not pair (inside a group)", "[emu][misuse]") {
  auto out = misuse_run(2, [](Communicator& c) {
    std::vector<float> x(8), y(8);
    int peer = 1 - c.rank();
    c.group_start();
    c.send(x.data(), 8, c.rank() == 0 ? DataType::float32 : DataType::int32, peer);
    c.recv(y.data(), 8, DataType::float32, peer);
    c.group_end();
  });
  // Rank 1 sends int32 to rank 0, which receives float32: both sides of that pair fail.
  CHECK(out[0].type == "MismatchError");
  CHECK_THAT(out[0].message,
             Contains("rank 1") && Contains("sends 8 x int32") && Contains("receives 8 x float32"));
  CHECK((out[1].type == "MismatchError" || out[1].type == "AbortedError"));
  CHECK_THAT(out[1].message, Contains("sends 8 x int32"));
}
