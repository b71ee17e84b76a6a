// The convenience shapes (torch_style, mindspore_style, scatter_chunks) and Work used as a
// careless client would: sizes that do not match torch's rules, enum values cast from ints,
// overflowing chunk sizes, a tensor dropped before its handle completes, huge wait_for timeouts.
// Results are recorded on the rank threads and asserted here (Catch2 is not thread-safe).
#include <catch2/catch.hpp>
#include <chrono>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "test_misuse_support.h"
#include "twinccl/chunk_scatter.h"
#include "twinccl/mindspore_style.h"
#include "twinccl/torch_style.h"

using namespace twinccl;
using namespace twinccl::testing;
using Catch::Matchers::Contains;
namespace td = twinccl::torch_style;
namespace ms = twinccl::mindspore_style;

namespace {

constexpr std::size_t kMax = std::numeric_limits<std::size_t>::max();

// Every rank's outcome must be `type` with a message containing `text` and "rank <r>".
void every_rank_got(const std::vector<RankOutcome>& outcomes, const std::string& type,
                    const std::string& text) {
  for (std::size_t r = 0; r < outcomes.size(); ++r) {
    INFO("rank " << r << ": " << outcomes[r].type << ": " << outcomes[r].message);
    CHECK(outcomes[r].type == type);
    CHECK_THAT(outcomes[r].message, Contains(text) && Contains("rank " + std::to_string(r)));
  }
}

}  // namespace

TEST_CASE("torch style: *_tensor calls and reduce_scatter's output need torch's exact sizes",
          "[emu][api][torch]") {
  // Before: each ran, leaving output elements unwritten or input elements unread.
  SECTION("all_gather_into_tensor with an output larger than size x input") {
    every_rank_got(misuse_run(2,
                              [](Communicator& c) {
                                td::all_gather_into_tensor(c, c.alloc(10, DataType::float32),
                                                           c.alloc(4, DataType::float32));
                              }),
                   "InvalidArgument", "output holds 10 elements but must hold exactly");
  }
  SECTION("reduce_scatter_tensor with an input larger than size x output") {
    every_rank_got(misuse_run(3,
                              [](Communicator& c) {
                                td::reduce_scatter_tensor(c, c.alloc(4, DataType::float32),
                                                          c.alloc(14, DataType::float32));
                              }),
                   "InvalidArgument", "group size x output = 3 x 4");
  }
  SECTION("reduce_scatter with an output larger than this rank's share") {
    every_rank_got(
        misuse_run(
            2,
            [](Communicator& c) {
              std::vector<Buffer> in{c.alloc(4, DataType::float32), c.alloc(4, DataType::float32)};
              td::reduce_scatter(c, c.alloc(8, DataType::float32), in);
            }),
        "InvalidArgument", "output holds 8 elements but input_list[");
  }
  SECTION("the exact sizes still run") {
    std::vector<float> got(2);
    auto outcomes = misuse_run(2, [&](Communicator& c) {
      Buffer in = c.alloc(2, DataType::float32), out = c.alloc(4, DataType::float32);
      for (float& v : in.host_span<float>()) v = static_cast<float>(c.rank() + 1);
      td::all_gather_into_tensor(c, out, in);
      Buffer part = c.alloc(2, DataType::float32);
      td::reduce_scatter_tensor(c, part, out);
      got[static_cast<std::size_t>(c.rank())] = part.host_span<float>()[0];
    });
    for (const RankOutcome& o : outcomes) CHECK(o.type.empty());
    CHECK(got == std::vector<float>{2.0f, 4.0f});  // rank r's share of [1,1,2,2], summed twice
  }
}

TEST_CASE("torch style: a P2POp kind cast from an int is refused before anything is issued",
          "[emu][api][torch]") {
  // Before: any value other than isend was taken as irecv: both ranks waited in recv (deadlock).
  auto outcomes = misuse_run(2, [](Communicator& c) {
    std::vector<td::P2POp> ops{
        {static_cast<td::P2POp::Kind>(7), c.alloc(4, DataType::float32), 1 - c.rank()}};
    td::batch_isend_irecv(c, ops)->wait();
  });
  every_rank_got(outcomes, "InvalidArgument", "p2p_op_list[0].kind value 7 is neither isend");
}

TEST_CASE("mindspore style: all_to_all_single keeps its tensor alive and names comm and rank",
          "[emu][api][mindspore]") {
  SECTION("the tensor dropped before the handle is waited on") {
    constexpr int n = 2;
    std::vector<int> alive_before_wait(n, -1);
    std::vector<std::vector<int>> got(n);
    auto outcomes = misuse_run(n, [&](Communicator& c) {
      std::vector<std::size_t> sizes(n, 3);
      std::weak_ptr<Memory> memory;
      ms::Result r;
      {
        Buffer t = c.alloc(3 * n, DataType::int32);
        for (int i = 0; i < 3 * n; ++i)
          t.host_span<int>()[static_cast<std::size_t>(i)] = 100 * c.rank() + i;
        memory = t.memory();
        r = ms::all_to_all_single(t, sizes, sizes, c, /*async_op=*/true);
      }
      // Before: the tensor's memory was freed here while the operation could still read it.
      alive_before_wait[static_cast<std::size_t>(c.rank())] = memory.expired() ? 0 : 1;
      r.handle.wait();
      got[static_cast<std::size_t>(c.rank())] = r.output.to_host<int>();
    });
    for (int r = 0; r < n; ++r) {
      auto i = static_cast<std::size_t>(r);
      CHECK(outcomes[i].type.empty());
      CHECK(alive_before_wait[i] == 1);
      // rank r receives elements [3r, 3r+3) of every rank q's tensor (100q + ...).
      std::vector<int> want;
      for (int q = 0; q < n; ++q)
        for (int k = 0; k < 3; ++k) want.push_back(100 * q + 3 * r + k);
      CHECK(got[i] == want);
    }
  }
  SECTION("split sizes that do not add up, or overflow") {
    every_rank_got(misuse_run(2,
                              [](Communicator& c) {
                                std::vector<std::size_t> in{1, 1}, out{2, 2};
                                ms::all_to_all_single(c.alloc(4, DataType::float32), out, in, c);
                              }),
                   "InvalidArgument", "all_to_all_single on comm 'world' rank");
    every_rank_got(misuse_run(2,
                              [](Communicator& c) {
                                std::vector<std::size_t> in{kMax, 5}, out{2, 2};
                                ms::all_to_all_single(c.alloc(4, DataType::float32), out, in, c);
                              }),
                   "InvalidArgument", "input_split_sizes overflow size_t when summed");
  }
}

TEST_CASE("scatter_chunks: overflowing chunk sizes or shapes are refused, and the peers learn why",
          "[emu][api][chunks]") {
  SECTION("one rank's chunk sizes overflow when summed: the root waiting for it is told why") {
    auto outcomes = misuse_run(2, [](Communicator& c) {
      Buffer t = c.alloc(40, DataType::float32);
      std::vector<std::size_t> shape{10, 4}, good{3, 7}, bad{kMax, 11};
      scatter_chunks(c, t, DataType::float32, shape, c.rank() == 1 ? bad : good, 0, 0);
    });
    // Before: rank 1 failed in Buffer::host ("elements overflow size_t", no call named) and
    // rank 0 learnt nothing of it.
    CHECK(outcomes[1].type == "InvalidArgument");
    CHECK_THAT(outcomes[1].message, Contains("scatter_chunks on comm 'world' rank 1") &&
                                        Contains("overflow size_t when summed"));
    CHECK(outcomes[0].type == "AbortedError");
    CHECK_THAT(outcomes[0].message, Contains("scatter_chunks on comm 'world' rank 1"));
  }
  SECTION("a shape whose element count overflows") {
    // Before: the products wrapped to 0 and the call "succeeded" with empty chunks.
    every_rank_got(
        misuse_run(2,
                   [](Communicator& c) {
                     std::vector<std::size_t> shape{std::size_t{1} << 32, std::size_t{1} << 32, 2};
                     scatter_chunks(c, Buffer{}, DataType::float32, shape, {}, 2, 0);
                   }),
        "InvalidArgument", "than size_t can count");
  }
}

TEST_CASE("Work::wait_for with hours::max waits for the operation on the emulator",
          "[emu][api][async]") {
  std::vector<int> finished(2, -1);
  auto outcomes = misuse_run(2, [&](Communicator& c) {
    Buffer b = c.alloc(4, DataType::float32);
    Work w = c.all_reduce(b, b, ReduceOp::sum(), CallOptions{true, {}});
    // Before: the timeout overflowed and wait_for returned false at once.
    finished[static_cast<std::size_t>(c.rank())] = w.wait_for(std::chrono::hours::max()) ? 1 : 0;
    w.wait();
  });
  for (std::size_t r = 0; r < 2; ++r) {
    CHECK(outcomes[r].type.empty());
    CHECK(finished[r] == 1);
  }
}

TEST_CASE("split: the ranks of one color must agree on the new communicator's name",
          "[emu][api][split]") {
  SECTION("different names in one color: every rank of that color gets a MismatchError") {
    // Before: the first rank to reach the meeting named every color's communicator with its own
    // name, so rank 0 asked for 'a' and silently got 'b' (or the other way round).
    auto outcomes = misuse_run(3, [](Communicator& c) {
      auto sub = c.split(0, c.rank(), c.rank() == 0 ? "a" : "b");
      c.barrier();  // the parent stays usable
    });
    for (std::size_t r = 0; r < 3; ++r) {
      INFO("rank " << r << ": " << outcomes[r].message);
      CHECK(outcomes[r].type == "MismatchError");
      CHECK_THAT(outcomes[r].message,
                 Contains("split #0 on comm 'world': the ranks of color 0 disagree") &&
                     Contains("rank(s) 0 (") && Contains("passed 'a'") &&
                     Contains("rank(s) 1,2 (") && Contains("passed 'b'"));
    }
  }
  SECTION("each color may have its own name; a color left unnamed gets the default") {
    std::vector<std::string> names(4);
    auto outcomes = misuse_run(4, [&](Communicator& c) {
      int color = c.rank() % 2;
      auto sub = c.split(color, 0, color == 0 ? "even" : "");
      sub->barrier();
      names[static_cast<std::size_t>(c.rank())] = sub->name();
    });
    for (const RankOutcome& o : outcomes) CHECK(o.type.empty());
    CHECK(names == std::vector<std::string>{"even", "world.split(1)", "even", "world.split(1)"});
  }
}

TEST_CASE("a Work outlives its split communicator: its wait works, the misuse is named rightly",
          "[emu][api][async]") {
  // The rule (docs/misuse.md): wait on an async Work before dropping its communicator. Waiting
  // later is safe (the communicator's destructor waited for the operation) but reported.
  std::vector<float> got(2, -1);
  std::string run_error;
  auto outcomes = run_ranks_capture(
      2,
      [&](Communicator& c) {
        Buffer b = c.alloc(4, DataType::float32);
        for (float& v : b.host_span<float>()) v = static_cast<float>(c.rank() + 1);
        Work w;
        {
          auto sub = c.split(0, c.rank());
          w = sub->all_reduce(b, b, ReduceOp::sum(), CallOptions{true, {}});
        }
        w.wait();
        w.wait();  // twice: returns again
        got[static_cast<std::size_t>(c.rank())] = b.host_span<float>()[3];
      },
      with_timeout(10.0), &run_error);
  for (const RankOutcome& o : outcomes) CHECK(o.type.empty());
  CHECK(got == std::vector<float>{3.0f, 3.0f});
  // Before: "... before the rank's function returned", though the rank had not returned then.
  CHECK_THAT(run_error, Contains("comm 'world.split(0)' rank") &&
                            Contains("its Work was never waited on") &&
                            Contains("before the communicator was destroyed"));
}

TEST_CASE("count 0 with null pointers in every call, send/recv in a group included",
          "[emu][api][p2p]") {
  // NCCL accepts null buffers with count 0. Before, a grouped recv of 0 elements passed a null
  // pointer to memmove (undefined behaviour, caught by UBSan in the sanitizer build).
  auto outcomes = misuse_run(3, [](Communicator& c) {
    c.all_reduce(nullptr, nullptr, 0, DataType::float32, ReduceOp::sum());
    c.reduce_scatter(nullptr, nullptr, 0, DataType::float32, ReduceOp::sum());
    c.all_gather(nullptr, nullptr, 0, DataType::float32);
    c.broadcast(nullptr, nullptr, 0, DataType::float32, 1);
    c.reduce(nullptr, nullptr, 0, DataType::float32, ReduceOp::max(), 2);
    c.all_to_all(nullptr, nullptr, 0, DataType::float32);
    c.gather(nullptr, nullptr, 0, DataType::float32, 0);
    c.scatter(nullptr, nullptr, 0, DataType::float32, 0);
    std::vector<std::size_t> zeros(3, 0);
    c.all_gather_v(nullptr, nullptr, zeros, {}, DataType::int8);
    c.reduce_scatter_v(nullptr, nullptr, zeros, {}, DataType::int8, ReduceOp::sum());
    c.all_to_all_v(nullptr, zeros, {}, nullptr, zeros, {}, DataType::int8);
    c.gather_v(nullptr, nullptr, zeros, {}, DataType::int8, 1);
    c.scatter_v(nullptr, nullptr, zeros, {}, DataType::int8, 1);
    {
      Group g(c);
      c.send(nullptr, 0, DataType::int8, (c.rank() + 1) % 3);
      c.recv(nullptr, 0, DataType::int8, (c.rank() + 2) % 3);
    }
    Buffer empty;
    c.all_reduce(empty, empty);
    c.all_gather(empty, empty);
    c.all_to_all(empty, empty);
    c.broadcast(empty, 0);
  });
  for (const RankOutcome& o : outcomes) {
    INFO(o.type << ": " << o.message);
    CHECK(o.type.empty());
  }
}
