// The Communicator API on the emulator: bad input errors, async overlap, groups and send/recv,
// uneven variants, split, Buffer overloads.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <mutex>
#include <numeric>
#include <thread>

#include "support/harness.h"
#include "twinccl/errors.h"

using namespace twinccl;
using namespace twinccl::testing;
using Catch::Matchers::Contains;

namespace {

// Runs fn on n ranks and returns the message of the error rank 0 got (or "" for none).
template <class Error>
std::string error_of(int n, const std::function<void(Communicator&)>& fn) {
  try {
    run_ranks(n, fn, HarnessOptions{false, "", 10.0});
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("bad input gives a typed error naming the call, rank and value", "[emu][errors]") {
  SECTION("null buffer with count > 0") {
    auto msg = error_of<InvalidArgument>(2, [](Communicator& c) {
      c.all_reduce(nullptr, nullptr, 4, DataType::float32, ReduceOp::sum());
    });
    CHECK_THAT(msg, Contains("all_reduce on comm 'world' rank") &&
                        Contains("send buffer is null") && Contains("test_api.cc:"));
  }
  SECTION("root out of range") {
    auto msg = error_of<InvalidArgument>(4, [](Communicator& c) {
      float x = 0;
      c.broadcast(&x, &x, 1, DataType::float32, 9);
    });
    CHECK_THAT(msg, Contains("broadcast") && Contains("root=9 out of range [0, 4)"));
  }
  SECTION("peer out of range") {
    auto msg = error_of<InvalidArgument>(2, [](Communicator& c) {
      float x = 0;
      c.send(&x, 1, DataType::float32, -1);
    });
    CHECK_THAT(msg, Contains("send") && Contains("peer=-1"));
  }
  SECTION("count overflow") {
    auto msg = error_of<InvalidArgument>(3, [](Communicator& c) {
      float x = 0;
      c.all_gather(&x, &x, std::size_t{1} << 62, DataType::float32);
    });
    CHECK_THAT(msg, Contains("overflow"));
  }
  SECTION("reduce op the data type does not support") {
    auto msg = error_of<InvalidArgument>(2, [](Communicator& c) {
      int x = 1;
      c.all_reduce(&x, &x, 1, DataType::int32, ReduceOp::premul_sum(0.5));
    });
    CHECK_THAT(msg, Contains("premul_sum") && Contains("0.5"));
  }
  SECTION("buffer smaller than the call needs") {
    auto msg = error_of<InvalidArgument>(4, [](Communicator& c) {
      Buffer send = c.alloc(8, DataType::float32), recv = c.alloc(16, DataType::float32);
      c.all_gather(send, recv);  // needs 4 x 8 = 32
    });
    CHECK_THAT(msg, Contains("recv buffer holds 16 elements but the call needs 32"));
  }
  SECTION("mismatched data types between buffers") {
    auto msg = error_of<InvalidArgument>(2, [](Communicator& c) {
      Buffer a = c.alloc(8, DataType::float32), b = c.alloc(8, DataType::int32);
      c.all_reduce(a, b);
    });
    CHECK_THAT(msg, Contains("float32") && Contains("int32"));
  }
  SECTION("group_end without group_start") {
    auto msg = error_of<InvalidArgument>(2, [](Communicator& c) { c.group_end(); });
    CHECK_THAT(msg, Contains("group_end") && Contains("no group_start"));
  }
  SECTION("a group never closed: its operations are reported, not silently dropped") {
    auto msg = error_of<InvalidArgument>(2, [](Communicator& c) {
      Buffer b = c.alloc(4, DataType::float32);
      c.group_start();
      c.all_reduce(b, b);
    });
    CHECK_THAT(msg, Contains("group_start on comm 'world'") && Contains("never closed") &&
                        Contains("1 operation(s) were not issued"));
  }
  SECTION("overlapping out-of-place buffers") {
    auto msg = error_of<InvalidArgument>(2, [](Communicator& c) {
      Buffer b = c.alloc(16, DataType::float32);
      c.all_reduce(b.data(), static_cast<float*>(b.data()) + 1, 8, DataType::float32,
                   ReduceOp::sum());
    });
    CHECK_THAT(msg, Contains("overlap"));
  }
  SECTION("ranks that disagree get a MismatchError naming both sides") {
    auto msg = error_of<MismatchError>(3, [](Communicator& c) {
      Buffer b = c.alloc(64, DataType::float32);
      c.all_reduce(b.data(), b.data(), c.rank() == 1 ? 32 : 64, DataType::float32, ReduceOp::sum());
    });
    CHECK_THAT(msg, Contains("all_reduce #0 on comm 'world'") && Contains("count") &&
                        Contains("rank 1") && Contains("passed 32") && Contains("ranks 0,2") &&
                        Contains("passed 64"));
  }
  SECTION("a rank that returns early does not hang the others") {
    auto t0 = std::chrono::steady_clock::now();
    auto msg = error_of<AbortedError>(3, [](Communicator& c) {
      if (c.rank() == 2) return;
      c.barrier();
    });
    CHECK_THAT(msg, Contains("rank 2") && Contains("already returned"));
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(2));
  }
  SECTION("a rank that throws aborts the others, and its error is the one reported") {
    std::string msg;
    try {
      run_ranks(4, [](Communicator& c) {
        if (c.rank() == 3) throw std::runtime_error("boom on rank 3");
        c.barrier();
      });
    } catch (const std::runtime_error& e) {
      msg = e.what();
    }
    CHECK(msg == "boom on rank 3");
  }
}

TEST_CASE("async operations overlap with the caller and complete on wait", "[emu][async]") {
  std::vector<float> got(4, -1);
  std::atomic<int> tested_before{0};
  run_ranks(4, [&](Communicator& c) {
    Buffer x = c.alloc(1 << 16, DataType::float32);
    for (float& v : x.host_span<float>()) v = static_cast<float>(c.rank() + 1);
    // Rank 0 arrives late: the others' async calls must return at once.
    if (c.rank() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(200));
    auto t0 = std::chrono::steady_clock::now();
    Work w = c.all_reduce(x, x, ReduceOp::sum(), {.async_op = true});
    auto issue = std::chrono::steady_clock::now() - t0;
    if (c.rank() != 0 && issue < std::chrono::milliseconds(100) && !w.test()) tested_before++;
    w.wait();
    w.wait();  // waiting twice is fine (an error would propagate to run_ranks)
    got[static_cast<std::size_t>(c.rank())] = x.host_span<float>()[100];
  });
  CHECK(tested_before == 3);
  for (float v : got) CHECK(v == 10.0f);
}

TEST_CASE("operations complete in issue order on a rank's stream", "[emu][async]") {
  std::vector<int> results(3);
  run_ranks(3, [&](Communicator& c) {
    Buffer x = c.alloc(1, DataType::int32);
    x.host_span<int>()[0] = 1;
    std::vector<Work> works;
    for (int i = 0; i < 5; ++i)
      works.push_back(c.all_reduce(x, x, ReduceOp::sum(), {.async_op = true}));
    for (Work& w : works) w.wait();
    results[static_cast<std::size_t>(c.rank())] = x.host_span<int>()[0];
  });
  for (int v : results) CHECK(v == 243);  // 3^5: each all_reduce triples
}

TEST_CASE("send/recv pairs inside a group do not deadlock (ring exchange)", "[emu][p2p]") {
  int n = GENERATE(1, 2, 3, 8);
  std::vector<int> from_left(static_cast<std::size_t>(n));
  run_ranks(n, [&](Communicator& c) {
    int me = c.rank(), right = (me + 1) % n, left = (me + n - 1) % n;
    Buffer out = c.alloc(100, DataType::int32), in = c.alloc(100, DataType::int32);
    for (int& v : out.host_span<int>()) v = me * 1000;
    {
      Group g(c);
      c.send(out, right);
      c.recv(in, left);
    }
    from_left[static_cast<std::size_t>(me)] = in.host_span<int>()[99];
  });
  for (int r = 0; r < n; ++r)
    CHECK(from_left[static_cast<std::size_t>(r)] == ((r + n - 1) % n) * 1000);
}

TEST_CASE("blocking send and recv in matching order", "[emu][p2p]") {
  std::vector<double> got(2);
  run_ranks(2, [&](Communicator& c) {
    Buffer b = c.alloc(3, DataType::float64);
    if (c.rank() == 0) {
      b.host_span<double>()[2] = 2.5;
      c.send(b, 1);
      c.recv(b, 1);
    } else {
      c.recv(b, 0);
      b.host_span<double>()[2] *= 2;
      c.send(b, 0);
    }
    got[static_cast<std::size_t>(c.rank())] = b.host_span<double>()[2];
  });
  CHECK(got[0] == 5.0);
  CHECK(got[1] == 5.0);
}

TEST_CASE("a group mixing collectives and send/recv", "[emu][group]") {
  std::vector<int> sums(4), received(4);
  run_ranks(4, [&](Communicator& c) {
    Buffer s = c.alloc(1, DataType::int32), p = c.alloc(1, DataType::int32),
           q = c.alloc(1, DataType::int32);
    s.host_span<int>()[0] = c.rank();
    p.host_span<int>()[0] = 100 + c.rank();
    c.group_start();
    c.send(p, (c.rank() + 2) % 4);
    c.all_reduce(s, s);
    c.recv(q, (c.rank() + 2) % 4);
    Work w = c.group_end();
    w.wait();  // rethrows a failure of the group, failing the test
    sums[static_cast<std::size_t>(c.rank())] = s.host_span<int>()[0];
    received[static_cast<std::size_t>(c.rank())] = q.host_span<int>()[0];
  });
  for (int r = 0; r < 4; ++r) {
    CHECK(sums[static_cast<std::size_t>(r)] == 6);
    CHECK(received[static_cast<std::size_t>(r)] == 100 + (r + 2) % 4);
  }
}

TEST_CASE("uneven variants: all_gather_v, reduce_scatter_v, all_to_all_v, gather_v, scatter_v",
          "[emu][uneven]") {
  int n = GENERATE(1, 2, 3, 7);
  bool schedule_path = GENERATE(false, true);
  std::vector<std::size_t> counts(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r)
    counts[static_cast<std::size_t>(r)] = static_cast<std::size_t>(r * 3 % 5);  // 0 included
  std::size_t total = std::accumulate(counts.begin(), counts.end(), std::size_t{0});
  std::mutex mu;
  std::vector<std::string> failures;
  run_ranks(
      n,
      [&](Communicator& c) {
        auto fail = [&](const std::string& what) {
          std::lock_guard<std::mutex> lock(mu);
          failures.push_back("rank " + std::to_string(c.rank()) + ": " + what);
        };
        auto me = static_cast<std::size_t>(c.rank());
        std::size_t displ =
            std::accumulate(counts.begin(), counts.begin() + static_cast<long>(me), std::size_t{0});
        // all_gather_v: element j of rank r's block is r*100 + j
        std::vector<std::int64_t> mine(counts[me]), all(total, -1);
        for (std::size_t j = 0; j < mine.size(); ++j)
          mine[j] = static_cast<std::int64_t>(me * 100 + j);
        c.all_gather_v(mine.data(), all.data(), counts, {}, DataType::int64);
        std::size_t at = 0;
        for (std::size_t r = 0; r < counts.size(); ++r) {
          for (std::size_t j = 0; j < counts[r]; ++j, ++at) {
            if (all[at] != static_cast<std::int64_t>(r * 100 + j))
              fail("all_gather_v element " + std::to_string(at));
          }
        }
        // reduce_scatter_v: everyone contributes (rank+1) everywhere -> n(n+1)/2
        std::vector<std::int32_t> contrib(total, c.rank() + 1), part(counts[me], -1);
        c.reduce_scatter_v(contrib.data(), part.data(), counts, {}, DataType::int32,
                           ReduceOp::sum());
        for (auto v : part) {
          if (v != n * (n + 1) / 2) fail("reduce_scatter_v value " + std::to_string(v));
        }
        // all_to_all_v: send (me + p) % 3 elements valued me*10+p to p
        std::vector<std::size_t> sc(static_cast<std::size_t>(n)), rc(static_cast<std::size_t>(n));
        for (int p = 0; p < n; ++p) {
          sc[static_cast<std::size_t>(p)] = static_cast<std::size_t>((c.rank() + p) % 3);
          rc[static_cast<std::size_t>(p)] = static_cast<std::size_t>((p + c.rank()) % 3);
        }
        std::vector<float> sbuf, rbuf(std::accumulate(rc.begin(), rc.end(), std::size_t{0}), -1.f);
        for (int p = 0; p < n; ++p) {
          for (std::size_t j = 0; j < sc[static_cast<std::size_t>(p)]; ++j)
            sbuf.push_back(static_cast<float>(c.rank() * 10 + p));
        }
        c.all_to_all_v(sbuf.data(), sc, {}, rbuf.data(), rc, {}, DataType::float32);
        at = 0;
        for (int p = 0; p < n; ++p) {
          for (std::size_t j = 0; j < rc[static_cast<std::size_t>(p)]; ++j, ++at) {
            if (rbuf[at] != static_cast<float>(p * 10 + c.rank()))
              fail("all_to_all_v from " + std::to_string(p));
          }
        }
        // gather_v to the last rank, then scatter_v back from it
        int root = n - 1;
        std::vector<std::int64_t> gathered(c.rank() == root ? total : 0, -1);
        c.gather_v(mine.data(), gathered.data(), counts, {}, DataType::int64, root);
        if (c.rank() == root && gathered != all) fail("gather_v differs from all_gather_v");
        std::vector<std::int64_t> back(counts[me], -1);
        c.scatter_v(c.rank() == root ? gathered.data() : nullptr, back.data(), counts, {},
                    DataType::int64, root);
        if (back != mine) fail("scatter_v did not return this rank's block");
        (void)displ;
      },
      HarnessOptions{schedule_path, "", 30.0});
  INFO((failures.empty() ? std::string() : failures.front()));
  CHECK(failures.empty());
}

TEST_CASE("split: colors, keys, kNoColor and nested splits", "[emu][split]") {
  std::vector<int> sub_rank(8, -2), sub_size(8, -2), sum(8, -1), nested(8, -1);
  run_ranks(8, [&](Communicator& c) {
    auto me = static_cast<std::size_t>(c.rank());
    int color = c.rank() == 7 ? kNoColor : c.rank() % 2;
    auto sub = c.split(color, /*key=*/-c.rank(), "half");
    if (!sub) {
      sub_rank[me] = -1;
      return;
    }
    sub_rank[me] = sub->rank();
    sub_size[me] = sub->size();
    Buffer x = sub->alloc(1, DataType::int32);
    x.host_span<int>()[0] = c.rank();
    sub->all_reduce(x, x);
    sum[me] = x.host_span<int>()[0];
    auto pair = sub->split(sub->rank() / 2, 0);
    Buffer y = pair->alloc(1, DataType::int32);
    y.host_span<int>()[0] = 1;
    pair->all_reduce(y, y);
    nested[me] = y.host_span<int>()[0];
  });
  CHECK(sub_rank[7] == -1);
  CHECK(sub_size[0] == 4);  // evens: 0 2 4 6
  CHECK(sub_size[1] == 3);  // odds without 7: 1 3 5
  CHECK(sub_rank[6] == 0);  // key = -rank: highest rank first
  CHECK(sub_rank[0] == 3);
  CHECK(sub_rank[5] == 0);
  CHECK(sum[0] == 12);
  CHECK(sum[3] == 9);
  CHECK(nested[6] == 2);  // evens split in pairs
  CHECK(nested[0] == 2);
  CHECK(nested[5] == 2);  // odds: {5,3} and {1}
  CHECK(nested[1] == 1);
}

TEST_CASE("results are bitwise repeatable run to run", "[emu][determinism]") {
  auto once = [](bool schedule_path) {
    std::vector<std::vector<float>> out(7);
    run_ranks(
        7,
        [&](Communicator& c) {
          Buffer x = c.alloc(10001, DataType::float32);
          auto s = x.host_span<float>();
          for (std::size_t i = 0; i < s.size(); ++i)
            s[i] = 1.0f / static_cast<float>(i + 3 + c.rank() * 7);
          c.all_reduce(x, x, ReduceOp::sum());
          out[static_cast<std::size_t>(c.rank())] = x.to_host<float>();
        },
        HarnessOptions{schedule_path, "", 30.0});
    return out;
  };
  auto a = once(false), b = once(false), s = once(true);
  CHECK(a == b);
  CHECK(a == s);  // the fast path reproduces the ring schedule bit for bit
  for (const auto& r : a) CHECK(r == a[0]);
}
