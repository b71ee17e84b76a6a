// split(color, key, name) on NCCL refuses ranks of one color that pass different names, as the
// emulator does: MismatchError on that color's ranks naming who passed what, before NCCL builds
// the communicator; the other colors get theirs and the parent stays usable. Run through the
// recording NCCL double (tests/backends/nccl_double) and, for the message, the emulator. Before:
// NCCL built the communicator under whichever name each rank asked for. Outcomes are recorded on
// the rank threads and asserted here.
#if defined(TWINCCL_NCCL_DOUBLE_PATH)

#include <catch2/catch.hpp>
#include <chrono>
#include <mutex>
#include <regex>
#include <string>
#include <vector>

#include "nccl/launch.h"
#include "nccl_double/control.h"
#include "twinccl/errors.h"

using namespace twinccl;
using Catch::Matchers::Contains;

namespace {

struct RankResult {
  std::string error;     // "MismatchError: ..." or "" (the split returned)
  std::string child;     // the new communicator's name and size, "" when none
  float parent_sum = 0;  // an all_reduce on the parent after the split
};

class Results {
 public:
  explicit Results(int n) : results_(static_cast<std::size_t>(n)) {}
  void set(int rank, RankResult r) {
    std::lock_guard<std::mutex> lock(mu_);
    results_[static_cast<std::size_t>(rank)] = std::move(r);
  }
  const RankResult& operator[](int rank) const { return results_[static_cast<std::size_t>(rank)]; }

 private:
  std::mutex mu_;
  std::vector<RankResult> results_;
};

// Ranks 0 and 1 are color 0 and ask for different names (long ones that differ only past the
// record's 160 bytes when `long_names`); rank 2 is color 1, alone.
void program(Communicator& w, Results& results, bool long_names) {
  RankResult r;
  const std::string stem = long_names ? std::string(200, 'n') : std::string("dp");
  const std::string asked = w.rank() == 2 ? std::string("solo") : stem + std::to_string(w.rank());
  try {
    auto child = w.split(w.rank() == 2 ? 1 : 0, w.rank(), asked);
    if (child) r.child = child->name() + "/" + std::to_string(child->size());
  } catch (const MismatchError& e) {
    r.error = std::string("MismatchError: ") + e.what();
  }
  Buffer x = w.alloc(1, DataType::float32);
  const float one = 1;
  x.copy_from_host(&one, sizeof one);
  w.all_reduce(x, x, ReduceOp::sum());
  r.parent_sum = x.to_host<float>()[0];
  results.set(w.rank(), r);
}

RunOptions nccl_options() {
  RunOptions o;
  o.backend = "nccl";
  o.timeout_s = 30;
  return o;
}

std::string without_numbers(const std::string& text) {
  return std::regex_replace(text, std::regex("#[0-9]+"), "#N");
}

}  // namespace

TEST_CASE("nccl split: ranks of one color passing different names get MismatchError",
          "[nccl_mapping][split]") {
  const bool long_names = GENERATE(false, true);
  INFO("long names: " << long_names);
  nccl_double::use();
  Results nccl(3);
  nccl::run_local_ranks({0, 1, 2}, nccl_options(),
                        [&](Communicator& w) { program(w, nccl, long_names); });
  CHECK(nccl_double::violations().empty());
  for (int rank : {0, 1}) {
    INFO("rank " << rank << ": " << nccl[rank].error);
    CHECK_THAT(nccl[rank].error,
               Contains("MismatchError: split #1 on comm 'world': the ranks of color 0 disagree "
                        "on the new communicator's name: rank(s) 0 (test_nccl_split_names.cc:") &&
                   Contains(") passed '" + (long_names ? std::string(80, 'n') + "...'" : "dp0'")) &&
                   Contains("rank(s) 1 (") &&
                   Contains("(every rank of one color must pass the same name)"));
    CHECK(nccl[rank].child.empty());
  }
  CHECK(nccl[2].error.empty());
  CHECK(nccl[2].child == "solo/1");
  for (int rank = 0; rank < 3; ++rank) CHECK(nccl[rank].parent_sum == 3);
  // NCCL was asked for no communicator for the refused color.
  CHECK(nccl_double::log_count("color=0 key") == 0);

  // The emulator's message for the same program, but for the operation's number.
  Results emu(3);
  RunOptions e;
  e.world_size = 3;
  twinccl::run(e, [&](Communicator& w) { program(w, emu, long_names); });
  for (int rank = 0; rank < 3; ++rank) {
    CHECK(without_numbers(nccl[rank].error) == without_numbers(emu[rank].error));
    CHECK(nccl[rank].child == emu[rank].child);
  }
}

TEST_CASE("nccl split: ranks of one color passing the same name still get their communicator",
          "[nccl_mapping][split]") {
  nccl_double::use();
  Results got(3);
  nccl::run_local_ranks({0, 1, 2}, nccl_options(), [&](Communicator& w) {
    RankResult r;
    auto child = w.split(w.rank() % 2, w.rank(), w.rank() % 2 == 0 ? "even" : "odd");
    r.child = child->name() + "/" + std::to_string(child->size());
    got.set(w.rank(), r);
  });
  CHECK(nccl_double::violations().empty());
  CHECK(got[0].child == "even/2");
  CHECK(got[1].child == "odd/1");
  CHECK(got[2].child == "even/2");
}

TEST_CASE("nccl split: a name over 256 bytes or with a control byte is refused as on the emulator",
          "[nccl_mapping][split]") {
  // Rank 0 asks for a bad name; rank 1 a good one. Rank 0 gets the emulator's InvalidArgument;
  // rank 1 is not left waiting in the split (the run's abort signal), on both backends.
  for (const std::string& bad : {std::string(300, 'x'), std::string("a\nb")}) {
    INFO("bad name of " << bad.size() << " bytes");
    auto program_of = [&](std::vector<std::string>& errors) {
      return [&](Communicator& w) {
        try {
          (void)w.split(0, w.rank(), w.rank() == 0 ? bad : std::string("fine"));
        } catch (const InvalidArgument& e) {
          errors[static_cast<std::size_t>(w.rank())] = std::string("InvalidArgument: ") + e.what();
          throw;
        }
      };
    };
    std::vector<std::string> nccl_errors(2), emu_errors(2);
    nccl_double::use();
    const auto start = std::chrono::steady_clock::now();
    CHECK_THROWS_AS(nccl::run_local_ranks({0, 1}, nccl_options(), program_of(nccl_errors)),
                    InvalidArgument);
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(20));  // not 30 s
    RunOptions e;
    e.world_size = 2;
    CHECK_THROWS_AS(twinccl::run(e, program_of(emu_errors)), InvalidArgument);
    INFO("nccl: " << nccl_errors[0] << "\nemu: " << emu_errors[0]);
    CHECK(!nccl_errors[0].empty());
    CHECK(without_numbers(nccl_errors[0]) == without_numbers(emu_errors[0]));
    CHECK(nccl_double::log_count("ncclCommSplit") == 0);  // refused before NCCL was asked
  }
}

#endif  // TWINCCL_NCCL_DOUBLE_PATH
