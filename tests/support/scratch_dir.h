// A folder of its own under the system's temporary folder for one test, made fresh (mkdtemp: a
// unique name, never an existing folder, so a killed run's leftovers cannot pass or fail a later
// check) and removed with everything in it when the test ends:
//
//   const twinccl_test::ScratchDir scratch("twinccl-my-test");
//   scratch.write("in.json", "{}");
//   run(scratch.path("in.json"), scratch.path("out.csv"));
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace twinccl_test {

struct ScratchDir {
  std::filesystem::path dir;
  explicit ScratchDir(const std::string& prefix) {
    const std::string pattern =
        (std::filesystem::temp_directory_path() / (prefix + "_XXXXXX")).string();
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    if (::mkdtemp(name.data()) == nullptr) {
      throw std::runtime_error("ScratchDir: cannot make a folder " + pattern + ": " +
                               std::strerror(errno));
    }
    dir = name.data();
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::string path(const std::string& name) const { return (dir / name).string(); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream out(path(name), std::ios::binary);
    out << text;
    out.close();
    if (!out) throw std::runtime_error("ScratchDir: cannot write " + path(name));
  }
};

}  // namespace twinccl_test
