// Misuse scenarios 63- (docs/misuse.md): what adversarial client programs did to the public API
// (huge counts through raw pointers, one communicator used from two threads, unbounded names).
#include <chrono>
#include <climits>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "test_misuse_support.h"

using namespace twinccl;
using namespace twinccl::testing;
using Catch::Matchers::Contains;

namespace {

constexpr std::size_t kHugeCount = SIZE_MAX / 8;  // 2^61 floats: 2^63 bytes, no overflow of size_t

}  // namespace

TEST_CASE("misuse 63: a raw-pointer count no process can hold is refused before any copy",
          "[emu][misuse][buffers]") {
  SECTION("a send/recv to oneself in a group (crashed in memmove before)") {
    auto out = misuse_run(1, [](Communicator& c) {
      std::vector<float> x(4), y(4);
      c.group_start();
      c.send(x.data(), kHugeCount, DataType::float32, 0);
      c.recv(y.data(), kHugeCount, DataType::float32, 0);
      c.group_end();
    });
    all_invalid(out, {"send on comm 'world' rank 0", "would end past the end of the address space",
                      std::to_string(kHugeCount) + " elements of float32"});
  }
  SECTION("an all_reduce on two ranks names the count, not a shared buffer") {
    auto out = misuse_run(2, [](Communicator& c) {
      std::vector<float> x(4), y(4);
      c.all_reduce(x.data(), y.data(), kHugeCount, DataType::float32, ReduceOp::sum());
    });
    all_invalid(out, {"all_reduce on comm 'world'", "send buffer at 0x",
                      "would end past the end of the address space", "the count"});
  }
  SECTION("a range that wraps around the top of the address space") {
    auto out = misuse_run(1, [](Communicator& c) {
      float x[4] = {};
      void* top = reinterpret_cast<void*>(UINTPTR_MAX - 3);
      c.all_reduce(x, top, 4, DataType::float32, ReduceOp::sum());
    });
    all_invalid(out, {"recv buffer at 0xfffffffffffffffc", "past the end of the address space"});
  }
  SECTION("large but possible counts still pass the check") {
    auto out = misuse_run(1, [](Communicator& c) {
      std::vector<float> x(1024), y(1024);
      c.all_reduce(x.data(), y.data(), x.size(), DataType::float32, ReduceOp::sum());
    });
    CHECK(out[0].type.empty());
  }
}

TEST_CASE("misuse 64: one communicator used from two threads at once is refused, the run stops",
          "[emu][misuse][threads]") {
  SECTION("a thread the rank started calls a collective while the rank is inside one") {
    CaughtByRank helper(2);  // what the helper thread of rank 0 caught
    auto out = misuse_run(2, [&](Communicator& c) {
      std::vector<float> x(4, 1.0f);
      if (c.rank() == 1) {
        std::this_thread::sleep_for(std::chrono::milliseconds(400));  // rank 0 waits inside
        c.all_reduce(x.data(), x.data(), x.size(), DataType::float32, ReduceOp::sum());
        return;
      }
      std::thread helper_thread([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        helper.run(0, [&] { c.barrier(); });
      });
      try {
        c.all_reduce(x.data(), x.data(), x.size(), DataType::float32, ReduceOp::sum());
      } catch (...) {
        helper_thread.join();
        throw;
      }
      helper_thread.join();
    });
    INFO(helper[0].type << ": " << helper[0].message);
    CHECK(helper[0].type == "InvalidArgument");
    CHECK_THAT(helper[0].message, Contains("barrier on comm 'world' rank 0"));
    CHECK_THAT(helper[0].message,
               Contains("called from one thread while another thread is inside all_reduce"));
    CHECK_THAT(helper[0].message, Contains("give each thread its own communicator"));
    for (const auto& r : out) {  // the call in flight and the peer learn it: the run stops
      INFO(r.type << ": " << r.message);
      CHECK(r.type == "AbortedError");
      CHECK_THAT(r.message, Contains("called from one thread while another thread"));
    }
  }
  SECTION("a thread adds an operation to the group another thread has open") {
    CaughtByRank helper(1);
    auto out = misuse_run(1, [&](Communicator& c) {
      std::vector<float> x(4, 1.0f);
      std::vector<float> y(4, 1.0f);
      c.group_start();
      c.all_reduce(y.data(), y.data(), y.size(), DataType::float32, ReduceOp::sum());
      std::thread helper_thread([&] {
        helper.run(0, [&] {
          c.all_reduce(x.data(), x.data(), x.size(), DataType::float32, ReduceOp::sum());
        });
      });
      helper_thread.join();
      c.group_end();
    });
    INFO(helper[0].type << ": " << helper[0].message);
    CHECK(helper[0].type == "InvalidArgument");
    CHECK_THAT(helper[0].message,
               Contains("has a group open on this communicator (group_start at"));
    INFO(out[0].type << ": " << out[0].message);
    CHECK(out[0].type == "AbortedError");  // the group's own operation is cancelled
  }
  SECTION("calls from several threads one after another stay legal") {
    std::vector<float> result(2, 0.0f);
    auto out = misuse_run(2, [&](Communicator& c) {
      std::vector<float> x(4, 1.0f);
      for (int t = 0; t < 3; ++t) {
        std::thread worker([&] {
          c.all_reduce(x.data(), x.data(), x.size(), DataType::float32, ReduceOp::sum());
        });
        worker.join();
      }
      result[static_cast<std::size_t>(c.rank())] = x[3];
    });
    for (const auto& r : out) CHECK(r.type.empty());
    CHECK(result[0] == 8.0f);
    CHECK(result[1] == 8.0f);
  }
}

TEST_CASE("misuse 65: names a client passes are bounded and printable in every message",
          "[emu][misuse][names]") {
  SECTION("a split name of 50 MiB is refused, the message stays short") {
    auto out =
        misuse_run(2, [](Communicator& c) { c.split(0, c.rank(), std::string(50u << 20, 'x')); });
    all_invalid(out, {"split on comm 'world'", "(52428800 bytes) is longer than 256 bytes"});
    for (const auto& r : out) CHECK(r.message.size() < 1024);
  }
  SECTION("a split name holding NUL or another control byte is refused, escaped") {
    auto out = misuse_run(2, [](Communicator& c) {
      c.split(0, c.rank(), c.rank() == 0 ? std::string("dp\0x", 4) : std::string("dp\nx"));
    });
    CHECK(out[0].type == "InvalidArgument");
    CHECK_THAT(out[0].message,
               Contains("name 'dp\\x00x' holds a control byte ('\\x00') at offset 2"));
    CHECK(out[0].message.find('\0') == std::string::npos);
    CHECK(out[1].type == "InvalidArgument");
    CHECK_THAT(out[1].message, Contains("'dp\\x0ax'"));
  }
  SECTION("names up to the cap still work") {
    std::vector<std::string> names(2);
    auto out = misuse_run(2, [&](Communicator& c) {
      auto sub = c.split(0, c.rank(), std::string(256, 'n'));
      names[static_cast<std::size_t>(c.rank())] = sub->name();
    });
    for (const auto& r : out) CHECK(r.type.empty());
    CHECK(names[0] == std::string(256, 'n'));
  }
  SECTION("a forced algorithm of 1 MiB is quoted in 80 bytes") {
    auto out = misuse_run(1, [](Communicator& c) {
      float x[1] = {};
      std::string algorithm(1u << 20, 'z');
      c.all_reduce(x, x, 1, DataType::float32, ReduceOp::sum(), {.algorithm = algorithm});
    });
    all_invalid(out, {"CallOptions.algorithm: unknown algorithm 'zzz", "...' (1048576 bytes)"});
    CHECK(out[0].message.size() < 1024);
  }
}

TEST_CASE("misuse 66: a group covers only its thread's communicator, as on NCCL",
          "[emu][misuse][groups]") {
  SECTION("send/recv on a split communicator inside a group opened on the world") {
    auto out = misuse_run(2, [](Communicator& c) {
      auto sub = c.split(0, c.rank(), "sub");
      std::vector<float> x(4, 1.0f), y(4);
      int peer = 1 - c.rank();
      c.group_start();
      sub->send(x.data(), x.size(), DataType::float32, peer);
      sub->recv(y.data(), y.size(), DataType::float32, peer);
      c.group_end();
    });
    // Before: a DeadlockError between the blocking sends on 'sub' (no word about the group).
    all_invalid(out, {"send on comm 'sub'", "this thread has a group open on comm 'world'",
                      "NCCL groups belong to a thread"});
  }
  SECTION("a collective of another communicator inside the group, which NCCL's backend refuses") {
    auto out = misuse_run(2, [](Communicator& c) {
      auto sub = c.split(0, c.rank(), "sub");
      std::vector<float> x(4, 1.0f);
      Group g(c);
      sub->all_reduce(x.data(), x.data(), x.size(), DataType::float32, ReduceOp::sum());
    });
    // Before: it ran (the emulator accepted what the NCCL backend refuses).
    all_invalid(out, {"all_reduce on comm 'sub'", "group_start at"});
  }
  SECTION("after group_end, and on the group's own communicator, calls are fine") {
    auto out = misuse_run(2, [](Communicator& c) {
      auto sub = c.split(0, c.rank(), "sub");
      std::vector<float> x(4, 1.0f);
      {
        Group g(*sub);
        sub->all_reduce(x.data(), x.data(), x.size(), DataType::float32, ReduceOp::sum());
      }
      c.all_reduce(x.data(), x.data(), x.size(), DataType::float32, ReduceOp::sum());
    });
    for (const auto& r : out) CHECK(r.type.empty());
  }
}

TEST_CASE("misuse 67: a rank calling another rank's communicator is refused at once",
          "[emu][misuse][threads]") {
  std::vector<Communicator*> comms(2, nullptr);
  std::mutex mu;
  auto out = misuse_run(
      2,
      [&](Communicator& c) {
        {
          std::lock_guard<std::mutex> lock(mu);
          comms[static_cast<std::size_t>(c.rank())] = &c;
        }
        c.barrier();  // both pointers are published
        std::vector<float> x(4, 1.0f);
        if (c.rank() == 0) {  // comms[1] instead of comms[0]: rank 1's communicator
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
          comms[1]->all_reduce(x.data(), x.data(), x.size(), DataType::float32, ReduceOp::sum());
        } else {
          std::this_thread::sleep_for(std::chrono::milliseconds(300));
        }
        c.barrier();
      },
      with_timeout(1.0));
  // Before: rank 0's thread took rank 1's place in all_reduce #1, both ranks hung past the
  // timeout (rank 1's communicator destroyed under rank 0's thread).
  INFO(out[0].type << ": " << out[0].message);
  CHECK(out[0].type == "InvalidArgument");
  CHECK_THAT(out[0].message, Contains("all_reduce on comm 'world' rank 1"));
  CHECK_THAT(out[0].message, Contains("called on the thread of world rank 0, but this communicator "
                                      "belongs to world rank 1"));
  INFO(out[1].type << ": " << out[1].message);
  CHECK(out[1].type == "AbortedError");  // told why rank 0 never came to the barrier
  CHECK_THAT(out[1].message, Contains("called on the thread of world rank 0"));
}

TEST_CASE("misuse 70: a split communicator one rank dropped fails its peers at once",
          "[emu][misuse][split]") {
  const bool p2p = GENERATE(false, true);
  auto out = misuse_run(2, [p2p](Communicator& c) {
    auto sub = c.split(0, c.rank(), "sub");
    std::vector<float> x(4, 1.0f);
    if (c.rank() == 0) {  // drops it, then computes for a while (no TwinCCL wait to deadlock on)
      sub.reset();
      std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    } else if (p2p) {
      sub->recv(x.data(), x.size(), DataType::float32, 0);
    } else {
      sub->all_reduce(x.data(), x.data(), x.size(), DataType::float32, ReduceOp::sum());
    }
  });
  // Before: rank 1 waited the whole timeout (10 s here, 300 s by default): TimeoutError.
  INFO(out[1].type << " after " << out[1].seconds << " s: " << out[1].message);
  CHECK(out[1].type == "AbortedError");
  CHECK_THAT(out[1].message, Contains("destroyed its communicator 'sub' without"));
  CHECK(out[1].seconds < 0.9);
  CHECK(out[0].type.empty());
}
