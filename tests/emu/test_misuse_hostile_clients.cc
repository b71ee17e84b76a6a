// Misuse scenarios 63- (docs/misuse.md): what adversarial client programs did to the public API
// (huge counts through raw pointers, one communicator used from two threads, unbounded names).
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "test_misuse_support.h"

using namespace twinccl;
using namespace twinccl::testing;
using Catch::Matchers::Contains;

namespace {

void all_invalid(const std::vector<RankOutcome>& out, const std::vector<std::string>& parts) {
  for (std::size_t r = 0; r < out.size(); ++r) {
    INFO("rank " << r << ": " << out[r].type << ": " << out[r].message);
    CHECK(out[r].type == "InvalidArgument");
    for (const auto& p : parts) CHECK_THAT(out[r].message, Contains(p));
  }
}

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
