// The tests' scratch folders (tests/support/scratch_dir.h): each one new and empty, never a
// leftover of a killed run or of another folder of the same test; a failed write is an error.
#include <catch2/catch.hpp>
#include <filesystem>
#include <stdexcept>

#include "support/scratch_dir.h"

using twinccl_test::ScratchDir;

TEST_CASE("a scratch folder is a fresh one, not an existing folder of the same name", "[cli]") {
  // Before: the folder was prefix + pid, and an existing one was taken as it was: a file left
  // in it (here by the first folder, as by a killed run) was seen by the next test.
  const ScratchDir first("twinccl-scratch-fresh");
  first.write("left.txt", "stale");
  const ScratchDir second("twinccl-scratch-fresh");
  CHECK(first.dir != second.dir);
  CHECK(std::filesystem::is_empty(second.dir));
  CHECK_FALSE(std::filesystem::exists(second.path("left.txt")));
}

TEST_CASE("a scratch file that cannot be written is an error, not a silent empty input", "[cli]") {
  const ScratchDir d("twinccl-scratch-write");
  CHECK_THROWS_AS(d.write("no-such-folder/in.json", "{}"), std::runtime_error);
}
