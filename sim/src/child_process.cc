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
#include <string>
#include <vector>

#include "flow_program.h"
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

[[noreturn]] void child_main(const FlowProgram& program, int fd) {
  char status = 'E';
  std::string message;
  std::vector<double> payload;
  try {
    FlowTimes times = play_with_simgrid(program);
    payload.assign(times.start_s.size() * 2, 0.0);
    std::copy(times.start_s.begin(), times.start_s.end(), payload.begin());
    std::copy(times.end_s.begin(), times.end_s.end(), payload.begin() + static_cast<std::ptrdiff_t>(times.start_s.size()));
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

FlowTimes play_in_child(const FlowProgram& program) {
  int fds[2];
  if (::pipe(fds) != 0) {
    throw InternalError(std::string("flow playback: pipe() failed: ") + std::strerror(errno));
  }
  std::fflush(nullptr);  // or the child's exit would write the caller's buffered output again
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw InternalError(std::string("flow playback: fork() failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_main(program, fds[1]);
  }
  ::close(fds[1]);
  const std::vector<char> data = read_all(fds[0]);
  ::close(fds[0]);
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(wstatus)) {
    throw InternalError("flow playback: the SimGrid child process " + std::to_string(pid) +
                        " died of signal " + std::to_string(WTERMSIG(wstatus)));
  }
  if (data.empty() || data[0] != 'O') {
    std::string why = "no output";
    if (!data.empty()) why.assign(data.data() + 1, data.size() - 1);
    throw InternalError("flow playback: the SimGrid simulation failed: " + why);
  }
  const std::size_t n = program.transfers.size();
  if (data.size() != 1 + 2 * n * sizeof(double)) {
    throw InternalError("flow playback: the SimGrid child returned " +
                        std::to_string(data.size() - 1) + " bytes, expected " +
                        std::to_string(2 * n * sizeof(double)));
  }
  FlowTimes times;
  times.start_s.assign(n, 0.0);
  times.end_s.assign(n, 0.0);
  std::memcpy(times.start_s.data(), data.data() + 1, n * sizeof(double));
  std::memcpy(times.end_s.data(), data.data() + 1 + n * sizeof(double), n * sizeof(double));
  return times;
}

}  // namespace twinccl::sim::detail
