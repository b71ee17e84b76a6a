// A folder of its own under the system's temporary folder for one test, removed with everything
// in it when the test ends, so parallel runs never collide and nothing is left behind:
//
//   const twinccl_test::ScratchDir scratch("twinccl-my-test");
//   scratch.write("in.json", "{}");
//   run(scratch.path("in.json"), scratch.path("out.csv"));
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>

namespace twinccl_test {

struct ScratchDir {
  std::filesystem::path dir;
  explicit ScratchDir(const std::string& prefix) {
    dir = std::filesystem::temp_directory_path() / (prefix + "_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::string path(const std::string& name) const { return (dir / name).string(); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(path(name)) << text;
  }
};

}  // namespace twinccl_test
