// One file per part for one path (twinccl/output_file.h part_output_paths): a device stays the
// device (before: `perf --trace /dev/full` with two collectives created
// /dev/full.all_reduce.float32 and exited 0), parts with the same name are numbered (before:
// `replay --trace` with a topology given twice wrote one timeline over the other), and a part
// cannot name another folder.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "twinccl/output_file.h"

using namespace twinccl;
using V = std::vector<std::string>;

TEST_CASE("part_output_paths: one part is the path itself", "[output]") {
  CHECK(part_output_paths("t.json", {"dgx-h100"}) == V{"t.json"});
}

TEST_CASE("part_output_paths: the part before the extension, numbered when alike", "[output]") {
  CHECK(part_output_paths("out/t.json", {"dgx-h100", "dgx-a100"}) ==
        V{"out/t.dgx-h100.json", "out/t.dgx-a100.json"});
  CHECK(part_output_paths("t.json", {"dgx-h100", "dgx-h100", "dgx-h100"}) ==
        V{"t.dgx-h100.json", "t.dgx-h100.2.json", "t.dgx-h100.3.json"});
  // Labels equal in their first 80 characters are told apart too.
  const std::string long_a = std::string(80, 'a') + "-one", long_b = std::string(80, 'a') + "-two";
  const V paths = part_output_paths("t.json", {long_a, long_b});
  CHECK(paths[0] != paths[1]);
  // A topology given as a path or with what-if edits stays in the folder of the path.
  CHECK(part_output_paths("t.json", {"/etc/topos/big.json --set nodes=2", "x"})[0] ==
        "t.big_--set_nodes=2.json");
  CHECK(part_output_paths("t.json", {"../../x", "y"})[0] == "t.x.json");
}

TEST_CASE("part_output_paths: a device is written in place, never a file beside it", "[output]") {
  CHECK(part_output_paths("/dev/full", {"all_reduce.float32", "all_gather.float32"}) ==
        V{"/dev/full", "/dev/full"});
  CHECK(part_output_paths("/dev/null", {"a", "b"}) == V{"/dev/null", "/dev/null"});
}
