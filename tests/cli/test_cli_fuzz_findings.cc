// Inputs found by fuzz/fuzz_cli_args (the whole program on an arbitrary command line), each run
// as a user would: the program ends at once with exit 2 and one bounded line.
#include <catch2/catch.hpp>
#include <string>

#include "cli_runner.h"

using Catch::Matchers::Contains;
using twinccl_test::CliResult;
using twinccl_test::run_cli;

namespace {

constexpr int kLimitS = 10;

// A shell word of `count` copies of the letter B.
std::string long_word(int count) {
  return "\"$(head -c " + std::to_string(count) + " /dev/zero | tr '\\0' B)\"";
}

}  // namespace

TEST_CASE("replay: a trace path of 100000 bytes is named by its first bytes, not echoed whole",
          "[cli][hostile][fuzz]") {
  // Found by fuzz_cli_args: "cannot open trace file '<the whole path>'" (100 KB on stderr).
  CliResult r = run_cli("replay " + long_word(100000) + " -t dgx-h100", "", kLimitS);
  INFO(r.out.substr(0, 400));
  CHECK(r.exit_code == 2);
  CHECK_THAT(r.out, Contains("cannot read trace file 'BBBB") && Contains("(100000 bytes)"));
  CHECK(r.out.size() < 600);
}
