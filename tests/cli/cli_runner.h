// Runs the real `twinccl` program as a user does (under `timeout`, so a hang fails the test with
// exit code 124 instead of stalling the suite) and returns its exit code, output and wall time.
#pragma once

#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace twinccl_test {

struct CliResult {
  int exit_code;
  std::string out;  // stdout and stderr
  double seconds;
};

// `env` is prefixed to the command ("TWINCCL_ALGO=bogus"); the run is killed after limit_s.
inline CliResult run_cli(const std::string& args, const std::string& env = "", int limit_s = 60) {
  std::string cmd = env + (env.empty() ? "" : " ") + "timeout -k 2 " + std::to_string(limit_s) +
                    " " + std::string(TWINCCL_CLI_PATH) + " " + args + " 2>&1";
  auto start = std::chrono::steady_clock::now();
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  std::string out;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), static_cast<int>(buf.size()), pipe.get())) out += buf.data();
  int status = pclose(pipe.release());
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, seconds};
}

// The whitespace-separated fields of a line of output (a table row, a header).
inline std::vector<std::string> fields(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string f; in >> f;) out.push_back(f);
  return out;
}

}  // namespace twinccl_test
