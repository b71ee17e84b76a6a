// play_in_child: one SimGrid simulation in a forked child process.
//
// Why a child: SimGrid 3.32 allows one engine per process, never resets its clock, and seals the
// platform at the first run (a zone added later is refused: "Cannot add a new child to the sealed
// zone root"). A simulator that times many topologies in one process therefore either builds every
// platform before the first run or starts fresh engines; we fork (about a millisecond), so every
// simulation has its own engine, clock and platform, and nothing of SimGrid's lives in the caller.
// The child receives the program through the fork (copy-on-write), writes the times to a pipe as
// raw doubles (or an error message) and leaves with _exit, running no destructors of the caller's.
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "flow_program.h"
#include "simgrid_run.h"
#include "twinccl/errors.h"

namespace twinccl::sim::detail {
namespace {

bool write_all(int fd, const void* data, std::size_t bytes) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    const ssize_t n = ::write(fd, p, bytes);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    bytes -= static_cast<std::size_t>(n);
  }
  return true;
}

std::vector<char> read_all(int fd) {
  std::vector<char> out;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    const std::size_t old = out.size();
    out.resize(old + static_cast<std::size_t>(n));
    std::memcpy(out.data() + old, buffer, static_cast<std::size_t>(n));
  }
  return out;
}

[[noreturn]] void child_main(const std::function<std::vector<double>()>& simulate, int fd) {
  char status = 'E';
  std::string message;
  std::vector<double> payload;
  try {
    payload = simulate();
    status = 'O';
  } catch (const std::exception& e) {
    message = e.what();
  } catch (...) {
    message = "unknown exception";
  }
  bool ok = write_all(fd, &status, 1);
  if (status == 'O') {
    ok = ok && write_all(fd, payload.data(), payload.size() * sizeof(double));
  } else {
    ok = ok && write_all(fd, message.data(), message.size());
  }
  ::close(fd);
  ::_exit(ok ? 0 : 3);
}

}  // namespace

std::vector<double> run_in_child(const std::function<std::vector<double>()>& simulate,
                                 std::size_t expected_values, const char* what) {
  const std::string prefix(what);
  int fds[2];
  if (::pipe(fds) != 0) {
    throw InternalError(prefix + ": pipe() failed: " + std::strerror(errno));
  }
  std::fflush(nullptr);  // or the child's exit would write the caller's buffered output again
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw InternalError(prefix + ": fork() failed: " + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_main(simulate, fds[1]);
  }
  ::close(fds[1]);
  const std::vector<char> data = read_all(fds[0]);
  ::close(fds[0]);
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(wstatus)) {
    throw InternalError(prefix + ": the SimGrid child process " + std::to_string(pid) +
                        " died of signal " + std::to_string(WTERMSIG(wstatus)));
  }
  if (data.empty() || data[0] != 'O') {
    std::string why = "no output";
    if (!data.empty()) why.assign(data.data() + 1, data.size() - 1);
    throw InternalError(prefix + ": the SimGrid simulation failed: " + why);
  }
  if (data.size() != 1 + expected_values * sizeof(double)) {
    throw InternalError(prefix + ": the SimGrid child returned " + std::to_string(data.size() - 1) +
                        " bytes, expected " + std::to_string(expected_values * sizeof(double)));
  }
  std::vector<double> values(expected_values);
  std::memcpy(values.data(), data.data() + 1, expected_values * sizeof(double));
  return values;
}

FlowTimes play_in_child(const FlowProgram& program) {
  const std::size_t n = program.transfers.size();
  const std::vector<double> values = run_in_child(
      [&] {
        const FlowTimes times = play_with_simgrid(program);
        std::vector<double> out(times.start_s);
        out.insert(out.end(), times.end_s.begin(), times.end_s.end());
        return out;
      },
      2 * n, "flow playback");
  FlowTimes times;
  times.start_s.assign(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(n));
  times.end_s.assign(values.begin() + static_cast<std::ptrdiff_t>(n), values.end());
  return times;
}

}  // namespace twinccl::sim::detail
