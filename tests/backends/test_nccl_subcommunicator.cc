// subcommunicator(ranks, name) on NCCL: the members only make it (ncclCommInitRankConfig with an
// id the first member sends the others over the parent, point to point); members that disagree
// get the emulator's MismatchError instead of waiting in NCCL's init. Run through the recording
// NCCL double (tests/backends/nccl_double), which checks what NCCL and CUDA would refuse.
#if defined(TWINCCL_NCCL_DOUBLE_PATH)

#include <catch2/catch.hpp>
#include <mutex>
#include <regex>
#include <string>
#include <vector>

#include "nccl/launch.h"
#include "nccl_double/control.h"
#include "twinccl/errors.h"
#include "twinccl/run.h"

using namespace twinccl;
using Catch::Matchers::Contains;

namespace {

class Results {
 public:
  explicit Results(int n) : results_(static_cast<std::size_t>(n)) {}
  void set(int rank, std::string r) {
    std::lock_guard<std::mutex> lock(mu_);
    results_[static_cast<std::size_t>(rank)] = std::move(r);
  }
  const std::string& operator[](int rank) const { return results_[static_cast<std::size_t>(rank)]; }

 private:
  std::mutex mu_;
  std::vector<std::string> results_;
};

RunOptions nccl_options() {
  RunOptions o;
  o.backend = "nccl";
  o.timeout_s = 30;
  return o;
}

float sum_on(Communicator& c, float value) {
  Buffer x = c.alloc(1, DataType::float32);
  x.copy_from_host(&value, sizeof value);
  c.all_reduce(x, x, ReduceOp::sum());
  return x.to_host<float>()[0];
}

std::string without_lines(const std::string& text) {
  return std::regex_replace(text, std::regex(":[0-9]+\\)"), ":N)");
}

// World ranks 3 and 1 make "pair" (3 is its rank 0); 0 and 2 do not call it.
void members_program(Communicator& w, Results& results) {
  std::string got = "outside";
  if (w.rank() == 3 || w.rank() == 1) {
    auto pair = w.subcommunicator(std::vector<int>{3, 1}, "pair");
    got = pair->name() + " " + std::to_string(pair->rank()) + "/" + std::to_string(pair->size()) +
          " sum " + std::to_string(static_cast<int>(sum_on(*pair, static_cast<float>(w.rank()))));
  }
  got += " world " + std::to_string(static_cast<int>(sum_on(w, 1.0f)));
  results.set(w.rank(), got);
}

// Rank 0 asks for [0,1], rank 1 for [0,1,2], rank 2 for nothing.
void disagreeing_program(Communicator& w, Results& results) {
  try {
    if (w.rank() == 0) w.subcommunicator(std::vector<int>{0, 1}, "g");
    if (w.rank() == 1) w.subcommunicator(std::vector<int>{0, 1, 2}, "g");
    results.set(w.rank(), "");
  } catch (const MismatchError& e) {
    results.set(w.rank(), std::string("MismatchError: ") + e.what());
  }
}

}  // namespace

TEST_CASE("nccl subcommunicator: made by its members only", "[nccl_mapping][subcommunicator]") {
  nccl_double::use();
  Results got(4);
  nccl::run_local_ranks({0, 1, 2, 3}, nccl_options(),
                        [&](Communicator& w) { members_program(w, got); });
  INFO(nccl_double::violations());
  CHECK(nccl_double::violations().empty());
  CHECK(got[3] == "pair 0/2 sum 4 world 4");
  CHECK(got[1] == "pair 1/2 sum 4 world 4");
  CHECK(got[0] == "outside world 4");
  CHECK(got[2] == "outside world 4");
  // NCCL was asked for one communicator of 2 ranks named "pair", by its two members.
  CHECK(nccl_double::log_count("ncclCommInitRankConfig nranks=2 name=pair") == 2);

  Results emu(4);
  RunOptions e;
  e.world_size = 4;
  twinccl::run(e, [&](Communicator& w) { members_program(w, emu); });
  for (int rank = 0; rank < 4; ++rank) CHECK(got[rank] == emu[rank]);
}

TEST_CASE("nccl subcommunicator: members that disagree get MismatchError, not a hang",
          "[nccl_mapping][subcommunicator]") {
  nccl_double::use();
  Results got(3);
  nccl::run_local_ranks({0, 1, 2}, nccl_options(),
                        [&](Communicator& w) { disagreeing_program(w, got); });
  INFO(nccl_double::violations());
  CHECK(nccl_double::violations().empty());
  for (int rank : {0, 1}) {
    INFO("rank " << rank);
    CHECK_THAT(got[rank], Contains("MismatchError: subcommunicator on comm 'world'") &&
                              Contains("of ranks [0,1]") && Contains("of ranks [0,1,2]") &&
                              Contains("every member must pass the same ranks"));
  }
  CHECK(got[2].empty());
  CHECK(nccl_double::log_count("ncclCommInitRankConfig nranks=2 name=g") == 0);
  CHECK(nccl_double::log_count("ncclCommInitRankConfig nranks=3 name=g") == 0);

  // Rank 2 lists only the leader: the leader tells rank 1, which agreed with it, the same.
  Results three(3);
  nccl::run_local_ranks({0, 1, 2}, nccl_options(), [&](Communicator& w) {
    try {
      w.subcommunicator(w.rank() == 2 ? std::vector<int>{0, 2} : std::vector<int>{0, 1, 2}, "h");
      three.set(w.rank(), "");
    } catch (const MismatchError& e) {
      three.set(w.rank(), e.what());
    }
  });
  CHECK(nccl_double::violations().empty());
  CHECK_THAT(three[0], Contains("rank 0 (") && Contains("for 'h' of ranks [0,1,2] and rank 2 ("));
  CHECK(three[1] == three[0]);
  CHECK(three[2] == three[0]);

  // On the emulator the rank that asks second gets the same text (the first one waits: it is
  // told when the other returns, with AbortedError).
  Results emu(3);
  RunOptions e;
  e.world_size = 3;
  e.timeout_s = 20;
  try {
    twinccl::run(e, [&](Communicator& w) { disagreeing_program(w, emu); });
  } catch (const Error&) {
  }
  const std::string emu_text = emu[0].empty() ? emu[1] : emu[0];
  CHECK((without_lines(emu_text) == without_lines(got[0]) ||
         without_lines(emu_text) == without_lines(got[1])));
}

#endif  // TWINCCL_NCCL_DOUBLE_PATH
