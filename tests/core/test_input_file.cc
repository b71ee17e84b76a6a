// Input files (twinccl/input_file.h): the one opener every reader of a user's file goes through.
// Each refusal is a ConfigError naming what was read and the path.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "twinccl/errors.h"
#include "twinccl/input_file.h"

using namespace twinccl;
using Catch::Contains;

namespace {
std::filesystem::path scratch_file(const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("twinccl_input_file_" + std::to_string(::getpid()) + ".txt");
  std::ofstream(path, std::ios::binary) << text;
  return path;
}
}  // namespace

TEST_CASE("read_input_file: the whole file within the cap, refused past it", "[input]") {
  const auto path = scratch_file(std::string(100, 'x'));
  CHECK(read_input_file("log", path, 100) == std::string(100, 'x'));
  CHECK_THROWS_AS(read_input_file("log", path, 99), ConfigError);
  CHECK_THROWS_WITH(read_input_file("log", path, 99, "; cut it"),
                    Contains("cannot read log '" + path.string() + "': more than 99 bytes") &&
                        Contains("(the cap per file; cut it)"));
  std::filesystem::remove(path);
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
