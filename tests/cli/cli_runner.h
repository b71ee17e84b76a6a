// Runs the real `twinccl` program as a user does (under `timeout`, so a hang fails the test with
// exit code 124 instead of stalling the suite) and returns its exit code, output and wall time.
#pragma once

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "support/scratch_dir.h"  // ScratchDir, for the tests that run the program

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

// How many times `what` occurs in `text` (overlapping ones counted).
inline std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// Whether the table whose header line starts with `header` keeps `column` aligned: every row under
// it (up to the next '#' line) holding the field `cell` holds it where the header holds `column`,
// and at least one row does. False when the header is missing.
inline bool column_aligned(const std::string& text, const std::string& header,
                           const std::string& column, const std::string& cell) {
  std::istringstream in(text);
  std::size_t at = std::string::npos;
  int rows = 0;
  for (std::string line; std::getline(in, line);) {
    if (at == std::string::npos) {
      if (line.rfind(header, 0) == 0) at = line.find(column);
      continue;
    }
    if (line.rfind("#", 0) == 0) break;
    const std::size_t word = (line + " ").find(" " + cell + " ");  // `cell` as a whole field
    if (word == std::string::npos) continue;
    if (word + 1 != at) return false;
    ++rows;
  }
  return rows > 0;
}

// The whitespace-separated fields of a line of output (a table row, a header).
inline std::vector<std::string> fields(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string f; in >> f;) out.push_back(f);
  return out;
}

// The first table row's fields (size, count, ..., algorithm/protocol last): the first line of
// `out` that is not a '#' line and starts with a number (leading blanks allowed); {} when none.
inline std::vector<std::string> first_row(const std::string& out) {
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);) {
    const std::vector<std::string> w = fields(line);
    if (!w.empty() && line[0] != '#' && std::isdigit(static_cast<unsigned char>(w[0][0]))) return w;
  }
  return {};
}

// The "which algorithm wins" table's entries on its first size line, in its order (fastest
// first): "  32768  tree/LL 28.7*  ring/LL 45.1" gives {"tree/LL", "28.7"}, {"ring/LL", "45.1"};
// `marked` gets the pair whose time carries the tuner's '*'. {} when the output has no such table.
inline std::vector<std::pair<std::string, std::string>> compare_pairs(const std::string& out,
                                                                      std::string& marked) {
  std::istringstream in(out);
  bool compare = false;
  std::vector<std::pair<std::string, std::string>> pairs;
  for (std::string line; std::getline(in, line);) {
    if (line.find("which algorithm wins") != std::string::npos) compare = true;
    const std::vector<std::string> w = fields(line);
    if (!compare || w.empty() || line[0] == '#' ||
        !std::isdigit(static_cast<unsigned char>(w[0][0])))
      continue;
    for (std::size_t i = 1; i + 1 < w.size(); ++i) {
      if (w[i].find('/') == std::string::npos) continue;
      std::string time = w[i + 1];  // "85.5*": the tuner's choice
      if (!time.empty() && time.back() == '*') time.pop_back(), marked = w[i];
      pairs.emplace_back(w[i], time);
    }
    break;
  }
  return pairs;
}

inline std::vector<std::pair<std::string, std::string>> compare_pairs(const std::string& out) {
  std::string marked;
  return compare_pairs(out, marked);
}

// Runs `twinccl ARGS...` (under `timeout`, output discarded) and returns its peak resident memory
// in KiB (getrusage of the child), or -1 if it could not be started; `exit_code` gets its status.
inline long peak_rss_kib(const std::vector<std::string>& args, int& exit_code) {
  std::vector<std::string> argv_text{"timeout", "-k", "2", "60", TWINCCL_CLI_PATH};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);  // the child must not write this process's buffered output again
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    if (std::freopen("/dev/null", "w", stdout) == nullptr) _exit(126);
    if (std::freopen("/dev/null", "w", stderr) == nullptr) _exit(126);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  rusage usage{};
  if (wait4(pid, &status, 0, &usage) != pid) return -1;
  exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return usage.ru_maxrss;
}

}  // namespace twinccl_test
