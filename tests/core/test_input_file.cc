// Input files (twinccl/input_file.h): the one opener every reader of a user's file goes through.
// Each refusal is a ConfigError naming what was read and the path.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "support/scratch_dir.h"
#include "twinccl/errors.h"
#include "twinccl/input_file.h"

using namespace twinccl;
using Catch::Contains;

TEST_CASE("read_input_file: the whole file within the cap, refused past it", "[input]") {
  const twinccl_test::ScratchDir scratch("twinccl_input_file");
  const std::filesystem::path path = scratch.path("input.txt");
  scratch.write("input.txt", std::string(100, 'x'));
  CHECK(read_input_file("log", path, 100) == std::string(100, 'x'));
  CHECK_THROWS_AS(read_input_file("log", path, 99), ConfigError);
  CHECK_THROWS_WITH(read_input_file("log", path, 99, "; cut it"),
                    Contains("cannot read log '" + path.string() + "': more than 99 bytes") &&
                        Contains("(the cap per file; cut it)"));
}

TEST_CASE("read_input_file: a device without end stops at the cap", "[input]") {
  CHECK_THROWS_WITH(read_input_file("topology file", "/dev/zero", 1 << 20),
                    Contains("cannot read topology file '/dev/zero': more than 1048576 bytes"));
}

TEST_CASE("open_input_file: missing, a directory, a long path: the file named", "[input]") {
  CHECK_THROWS_WITH(open_input_file("trace file", "/no/such.json"),
                    Contains("cannot read trace file '/no/such.json': no such file"));
  CHECK_THROWS_WITH(open_input_file("profile", "/tmp"),
                    Contains("cannot read profile '/tmp': it is a directory"));
  const std::string long_path(100000, 'B');
  CHECK_THROWS_WITH(open_input_file("log", long_path),
                    Contains("cannot read log 'BBBB") && Contains("(100000 bytes)"));
}
