// The split-name rule's message (twinccl/split_names.h), shared by the emulator and NCCL: who
// passed what, in the order of the new communicator, bounded for thousands of different names.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "twinccl/split_names.h"

using Catch::Matchers::Contains;
using twinccl::split_name_disagreement;
using twinccl::SplitNameAsked;

TEST_CASE("split names: agreement is silent, a disagreement names ranks, names and call sites",
          "[core][split]") {
  std::vector<SplitNameAsked> same{{0, "dp", "a.cc:1"}, {2, "dp", "a.cc:1"}};
  CHECK(split_name_disagreement("world", 3, 0, same).empty());
  std::vector<SplitNameAsked> differ{
      {2, "tp", "b.cc:7"}, {0, "dp", "a.cc:1"}, {1, "", "c.cc:3"}, {3, "dp", "a.cc:1"}};
  CHECK(split_name_disagreement("world", 3, 5, differ) ==
        "split #3 on comm 'world': the ranks of color 5 disagree on the new communicator's name: "
        "rank(s) 2 (b.cc:7) passed 'tp'; rank(s) 0,3 (a.cc:1) passed 'dp'; rank(s) 1 (c.cc:3) "
        "passed no name (every rank of one color must pass the same name)");
}

TEST_CASE("split names: 4096 different names are summed up after 16", "[core][split]") {
  std::vector<SplitNameAsked> asked;
  for (int r = 0; r < 4096; ++r) asked.push_back({r, "n" + std::to_string(r), "a.cc:1"});
  const std::string text = split_name_disagreement("world", 0, 0, asked);
  CHECK_THAT(text, Contains("rank(s) 15 (a.cc:1) passed 'n15'") &&
                       Contains("; 4080 more rank(s) passed other names"));
  CHECK_FALSE(text.find("'n16'") != std::string::npos);
  CHECK(text.size() < 2000);
  const std::string long_name(1000, 'x');
  std::vector<SplitNameAsked> two{{0, long_name, "a.cc:1"}, {1, long_name + "y", "a.cc:1"}};
  CHECK_THAT(split_name_disagreement("w", 1, 0, two),
             Contains("passed '" + std::string(80, 'x') + "...'"));
}
