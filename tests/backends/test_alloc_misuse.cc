// Communicator::alloc with a data type cast from an int, or a count whose bytes overflow, on both
// backends: an InvalidArgument naming the call, the communicator, the rank and the value (before,
// the emulator and NCCL threw size_of's "data type value 99 is outside the DataType enum", which
// names neither the communicator nor the rank). Outcomes are recorded on the rank threads and
// asserted here.
#include <catch2/catch.hpp>
#include <limits>
#include <mutex>
#include <numeric>
#include <string>
#include <vector>

#include "support/harness.h"
#include "twinccl/errors.h"

#if defined(TWINCCL_NCCL_DOUBLE_PATH)
#include "nccl/launch.h"
#include "nccl_double/control.h"
#endif

using namespace twinccl;
using Catch::Matchers::Contains;

namespace {

constexpr std::size_t kMaxCount = std::numeric_limits<std::size_t>::max();

// What alloc(count, dtype) threw on each rank ("" when it returned a buffer).
class AllocOutcomes {
 public:
  explicit AllocOutcomes(int n) : messages_(static_cast<std::size_t>(n)) {}
  void attempt(Communicator& c, std::size_t count, DataType dtype) {
    std::string got;
    try {
      (void)c.alloc(count, dtype);
    } catch (const InvalidArgument& e) {
      got = std::string("InvalidArgument: ") + e.what();
    } catch (const std::exception& e) {
      got = std::string("other: ") + e.what();
    }
    std::lock_guard<std::mutex> lock(mu_);
    messages_[static_cast<std::size_t>(c.rank())] = got;
  }
  const std::vector<std::string>& messages() const { return messages_; }

 private:
  std::mutex mu_;
  std::vector<std::string> messages_;
};

void every_rank_named(const std::vector<std::string>& messages, const std::string& comm,
                      const std::string& text) {
  for (std::size_t r = 0; r < messages.size(); ++r) {
    INFO("rank " << r << ": " << messages[r]);
    CHECK_THAT(messages[r], Contains("InvalidArgument: alloc on comm '" + comm + "' rank " +
                                     std::to_string(r)) &&
                                Contains(text));
  }
}

}  // namespace

TEST_CASE("alloc on the emulator: a bad dtype or an overflowing count names comm and rank",
          "[backends][alloc]") {
  const int n = 3;
  SECTION("a data type value outside the enum") {
    AllocOutcomes outcomes(n);
    testing::run_ranks(
        n, [&](Communicator& c) { outcomes.attempt(c, 16, static_cast<DataType>(99)); });
    every_rank_named(outcomes.messages(), "world",
                     "data type value 99 is outside the DataType enum");
  }
  SECTION("a split communicator's name, and a count whose bytes overflow size_t") {
    AllocOutcomes outcomes(n);
    testing::run_ranks(n, [&](Communicator& c) {
      auto sub = c.split(0, c.rank(), "dp");
      outcomes.attempt(*sub, kMaxCount / 2, DataType::float32);
    });
    every_rank_named(outcomes.messages(), "dp", "elements of float32 overflow size_t");
  }
}

#if defined(TWINCCL_NCCL_DOUBLE_PATH)
TEST_CASE("alloc on NCCL: a bad dtype names comm and rank", "[backends][alloc][nccl_mapping]") {
  nccl_double::use();
  const int n = 2;
  AllocOutcomes outcomes(n);
  RunOptions o;
  o.backend = "nccl";
  o.timeout_s = 30;
  nccl::run_local_ranks(
      {0, 1}, o, [&](Communicator& c) { outcomes.attempt(c, 16, static_cast<DataType>(200)); });
  every_rank_named(outcomes.messages(), "world",
                   "data type value 200 is outside the DataType enum");
  CHECK(nccl_double::violations().empty());
}
#endif
