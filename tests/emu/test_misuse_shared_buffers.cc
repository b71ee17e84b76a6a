// Misuse scenarios 53-57 (docs/misuse.md): buffers shared across ranks. Every rank is a thread of
// one process, so one array used by several ranks makes them write the same memory; on GPUs each
// rank's buffers are its own, so the emulator refuses the call on every rank before writing.
// Outcomes are recorded on the rank threads and asserted here, on the test thread.
#include <algorithm>
#include <array>

#include "test_misuse_support.h"

using namespace twinccl;
using namespace twinccl::testing;
using Catch::Matchers::Contains;

namespace {

void every_rank_shares(const std::vector<RankOutcome>& out, const std::vector<std::string>& parts) {
  for (std::size_t r = 0; r < out.size(); ++r) {
    INFO("rank " << r << ": " << out[r].type << ": " << out[r].message);
    CHECK(out[r].type == "InvalidArgument");
    for (const auto& p : parts) CHECK_THAT(out[r].message, Contains(p));
  }
}

void no_errors(const std::vector<RankOutcome>& out) {
  for (std::size_t r = 0; r < out.size(); ++r) {
    INFO("rank " << r << ": " << out[r].type << ": " << out[r].message);
    CHECK(out[r].type.empty());
  }
}

}  // namespace

TEST_CASE("misuse 53: one output array shared by every rank's all_reduce is refused",
          "[emu][misuse][shared]") {
  // 4 elements take the led small path, 8192 the fast path or the schedule of each algorithm.
  std::size_t count = GENERATE(std::size_t{4}, std::size_t{8192});
  std::string algorithm = GENERATE(as<std::string>{}, "", "tree", "ring");
  bool schedule_path = GENERATE(false, true);
  CAPTURE(count, algorithm, schedule_path);
  std::vector<float> shared(count, -7.0f);  // what every rank's closure captures
  CheckOptions o = with_timeout(10.0);
  o.algorithm = algorithm;
  o.schedule_path = schedule_path;
  auto out = misuse_run(
      4,
      [&](Communicator& c) {
        std::vector<float> in(count, static_cast<float>(c.rank() + 1));
        c.all_reduce(in.data(), shared.data(), count, DataType::float32, ReduceOp::sum());
      },
      o);
  std::string bytes = std::to_string(count * 4) + " bytes";
  every_rank_shares(out, {"all_reduce #0 on comm 'world': ranks ", " share memory: rank ",
                          "'s output (recvbuf at 0x", bytes + "; test_misuse_shared_buffers.cc:",
                          "overlaps rank ", "in " + bytes + " (offset 0 of rank ",
                          "Give each rank its own output buffers", "Nothing was written"});
  CHECK(std::all_of(shared.begin(), shared.end(), [](float v) { return v == -7.0f; }));
}

TEST_CASE("misuse 54: one rank's output over another rank's input, at an offset",
          "[emu][misuse][shared]") {
  std::vector<double> pool(64, 1.0);
  auto out = misuse_run(3, [&](Communicator& c) {
    std::vector<double> own(16, 0.0);
    // rank 0 reads pool[0..16); rank 2 writes pool[10..26); rank 1 uses its own memory
    const double* in = c.rank() == 0 ? pool.data() : own.data();
    double* result = c.rank() == 2 ? pool.data() + 10 : own.data();
    c.all_reduce(in, result, 16, DataType::float64, ReduceOp::max());
  });
  auto at = [&](std::size_t k) {
    char text[32];
    std::snprintf(text, sizeof text, "0x%llx",
                  static_cast<unsigned long long>(reinterpret_cast<std::uintptr_t>(&pool[k])));
    return std::string(text);
  };
  every_rank_shares(
      out, {"ranks 2 and 0 share memory: rank 2's output (recvbuf at " + at(10) + ", 128 bytes",
            "overlaps rank 0's input (sendbuf at " + at(0) + ", 128 bytes",
            "in 48 bytes (offset 0 of rank 2's recvbuf, offset 80 of rank 0's sendbuf)"});
  CHECK(std::all_of(pool.begin(), pool.end(), [](double v) { return v == 1.0; }));
}

TEST_CASE("misuse 55: shared read-only inputs and in-place calls stay legal",
          "[emu][misuse][shared]") {
  int n = GENERATE(2, 7, 64);
  CAPTURE(n);
  std::vector<float> input(32, 1.5f);  // every rank reads it: equal copies on GPUs
  std::vector<std::vector<float>> results(static_cast<std::size_t>(n));
  auto out = misuse_run(n, [&](Communicator& c) {
    auto& mine = results[static_cast<std::size_t>(c.rank())];
    mine.assign(32, 0.0f);
    c.all_reduce(input.data(), mine.data(), 32, DataType::float32, ReduceOp::sum());
    c.all_reduce(mine.data(), mine.data(), 32, DataType::float32, ReduceOp::max());  // in place
    std::vector<float> gathered(static_cast<std::size_t>(n) * 4);
    c.all_gather(input.data(), gathered.data(), 4, DataType::float32);
    // gather: only the root writes, so the others' (unused) recv may be anything
    c.gather(input.data(), c.rank() == 0 ? gathered.data() : input.data(), 4, DataType::float32, 0);
    mine[0] += gathered.back();
  });
  no_errors(out);
  for (const auto& mine : results) {
    CHECK(mine[1] == 1.5f * static_cast<float>(n));
    CHECK(mine[0] == 1.5f * static_cast<float>(n) + 1.5f);
  }
}

TEST_CASE("misuse 55b: two of 64 ranks sharing an output are named", "[emu][misuse][shared]") {
  std::vector<float> shared(128);
  auto out = misuse_run(64, [&](Communicator& c) {
    std::vector<float> own(128), in(128, 1.0f);
    float* result = c.rank() == 17 || c.rank() == 42 ? shared.data() : own.data();
    c.all_reduce(in.data(), result, 128, DataType::float32, ReduceOp::sum());
  });
  for (const auto& o : out) {
    INFO(o.message);
    CHECK(o.type == "InvalidArgument");
    bool named = o.message.find("ranks 17 and 42 share memory") != std::string::npos ||
                 o.message.find("ranks 42 and 17 share memory") != std::string::npos;
    CHECK(named);
  }
}

TEST_CASE("misuse 56: uneven collectives with a shared output", "[emu][misuse][shared]") {
  const int n = 4;
  std::vector<std::size_t> counts{1, 3, 2, 5};
  std::vector<float> shared(64, -1.0f);
  std::string which = GENERATE(as<std::string>{}, "all_gather_v", "reduce_scatter_v",
                               "all_to_all_v", "gather_v", "scatter_v");
  CAPTURE(which);
  auto out = misuse_run(n, [&](Communicator& c) {
    std::vector<float> in(64, 1.0f);
    float* result = c.rank() >= 2 ? shared.data() : in.data() + 32;  // ranks 2 and 3 share
    if (which == "all_gather_v") {
      c.all_gather_v(in.data(), result, counts, {}, DataType::float32);
    } else if (which == "reduce_scatter_v") {
      c.reduce_scatter_v(in.data(), result, counts, {}, DataType::float32, ReduceOp::sum());
    } else if (which == "all_to_all_v") {
      std::vector<std::size_t> ones(n, 1);
      c.all_to_all_v(in.data(), ones, {}, result, ones, {}, DataType::float32);
    } else if (which == "gather_v") {  // root 3 writes over what rank 2 passes as its recv:
      // rank 2 writes nothing, so that alone is legal; its input there is not
      const float* send = c.rank() == 2 ? shared.data() + 1 : in.data();
      c.gather_v(send, result, counts, {}, DataType::float32, 3);
    } else {
      c.scatter_v(in.data(), result, counts, {}, DataType::float32, 0);
    }
  });
  std::string first =
      which == "gather_v" ? "ranks 3 and 2 share memory: rank 3's output" : "share memory: rank ";
  every_rank_shares(out, {which + " #0 on comm 'world': ", first, "Nothing was written"});
  CHECK(std::all_of(shared.begin(), shared.end(), [](float v) { return v == -1.0f; }));
}

TEST_CASE("misuse 57: a recv into the very buffer its peer sends from (alone, in a group)",
          "[emu][misuse][shared]") {
  bool grouped = GENERATE(false, true);
  bool lanes = GENERATE(false, true);
  CAPTURE(grouped, lanes);
  std::vector<int> shared(8, 5);
  std::array<int, 2> lines{};
  CheckOptions o = with_timeout(10.0);
  o.p2p_per_peer_streams = lanes;
  auto out = misuse_run(
      2,
      [&](Communicator& c) {
        std::vector<float> other(4, 1.0f);
        if (grouped) c.group_start();
        if (c.rank() == 0) {
          lines[0] = __LINE__ + 1;
          c.send(shared.data() + 2, 4, DataType::int32, 1);
          c.recv(other.data(), 4, DataType::float32, 1);
        } else {  // recv first: blocking sends wait for their recv
          lines[1] = __LINE__ + 1;
          c.recv(shared.data(), 4, DataType::int32, 0);
          c.send(other.data(), 4, DataType::float32, 0);
        }
        if (grouped) c.group_end();
      },
      o);
  for (std::size_t r = 0; r < 2; ++r) {
    INFO("rank " << r << ": " << out[r].type << ": " << out[r].message);
    // the pair's two sides are told; with a second pair in flight a side may instead learn it as
    // the cause of that pair's failure
    bool told = out[r].type == "InvalidArgument" || out[r].type == "AbortedError";
    CHECK(told);
    CHECK_THAT(out[r].message,
               Contains("send/recv on comm 'world': ranks 0 and 1 share memory: rank 1's recv "
                        "buffer (at ") &&
                   Contains("16 bytes; " + site(__FILE__, lines[1]) + ") overlaps rank 0's send") &&
                   Contains(site(__FILE__, lines[0]) + ") in 8 bytes (offset 8 of the recv "
                                                       "buffer, offset 0 of the send buffer)"));
  }
  CHECK(std::all_of(shared.begin(), shared.end(), [](int v) { return v == 5; }));
}

TEST_CASE("misuse 57b: grouped collectives, each checked", "[emu][misuse][shared]") {
  std::vector<float> shared(16, 2.0f);
  auto out = misuse_run(3, [&](Communicator& c) {
    std::vector<float> a(16, 1.0f), b(16);
    Group g(c);
    c.all_reduce(a.data(), a.data(), 16, DataType::float32, ReduceOp::sum());
    c.broadcast(a.data(), c.rank() == 0 ? b.data() : shared.data(), 16, DataType::float32, 0);
  });
  every_rank_shares(out, {"broadcast #1 on comm 'world': ranks ", "share memory"});
  CHECK(std::all_of(shared.begin(), shared.end(), [](float v) { return v == 2.0f; }));
}

TEST_CASE("misuse 57c: two collectives of one group, one rank's output under another's input",
          "[emu][misuse][shared]") {
  // Rank 0's first all_reduce writes `shared`; rank 1's second one reads it. Each collective alone
  // is fine (57b's check passes), but on GPUs the two may run at once. Before: no error, and the
  // result depended on the emulator running them in order.
  std::vector<float> shared(16, 2.0f);
  auto out = misuse_run(2, [&](Communicator& c) {
    std::vector<float> a(16, 1.0f), b(16), d(16);
    Group g(c);
    c.all_reduce(a.data(), c.rank() == 0 ? shared.data() : b.data(), 16, DataType::float32,
                 ReduceOp::sum());
    c.all_reduce(c.rank() == 1 ? shared.data() : a.data(), d.data(), 16, DataType::float32,
                 ReduceOp::sum());
  });
  int refused = 0;
  for (std::size_t r = 0; r < out.size(); ++r) {
    INFO("rank " << r << ": " << out[r].type << ": " << out[r].message);
    CHECK((out[r].type == "InvalidArgument" || out[r].type == "AbortedError"));
    refused += out[r].type == "InvalidArgument";
    CHECK_THAT(out[r].message,
               Contains("ranks 0 and 1 share memory across two collectives of one group: rank 0's "
                        "output (recvbuf at 0x") &&
                   Contains("of the group's collective 1 (test_misuse_shared_buffers.cc:") &&
                   Contains("overlaps rank 1's input (sendbuf at 0x") &&
                   Contains("of the group's collective 2") && Contains("Nothing was written"));
  }
  CHECK(refused == 1);  // the rank whose post completed the group; the other is aborted with it
  CHECK(std::all_of(shared.begin(), shared.end(), [](float v) { return v == 2.0f; }));
}

TEST_CASE("misuse 57c: a group's collectives on each rank's own buffers stay legal",
          "[emu][misuse][shared]") {
  const int n = GENERATE(2, 3, 7);
  auto out = misuse_run(n, [&](Communicator& c) {
    std::vector<float> a(16, 1.0f), b(16), shared_by_my_ops(16, 3.0f);
    Group g(c);
    // One rank's own collectives may use one buffer (its order is its own, as on NCCL).
    c.all_reduce(a.data(), shared_by_my_ops.data(), 16, DataType::float32, ReduceOp::sum());
    c.all_reduce(shared_by_my_ops.data(), b.data(), 16, DataType::float32, ReduceOp::sum());
    c.broadcast(a.data(), a.data(), 16, DataType::float32, 0);
  });
  no_errors(out);
}
