// play_in_child: one SimGrid simulation in a forked child process.
//
// Why a child: SimGrid 3.32 allows one engine per process, never resets its clock, and seals the
// platform at the first run (a zone added later is refused: "Cannot add a new child to the sealed
// zone root"). A simulator that times many topologies in one process therefore either builds every
// platform before the first run or starts fresh engines; we fork (about a millisecond), so every
// simulation has its own engine, clock and platform, and nothing of SimGrid's lives in the caller.
// The child receives the program through the fork (copy-on-write), writes the times to a pipe as
// raw doubles (or an error message) and leaves with _exit, running no destructors of the caller's.
// Its stderr goes to a second pipe: when it fails (an exception, a signal such as a SimGrid
// assertion's abort or a crash, a short answer) the InternalError names what was simulated, the
// signal by name and the last lines SimGrid printed, so no failure comes back as a bare signal.
// A user's error found in the child (a TwinCCL ConfigError, DeadlockError, InvalidArgument or
// MismatchError, such as a replay whose ranks wait for each other) comes back as the same type
// with its own message: it is the request's problem, not SimGrid's. The child dies with its
// parent (PR_SET_PDEATHSIG, and a check that the parent is still the one that forked it, for a
// parent that died before the child asked), so killing the caller leaves no simulation running.
// Every simulation has a deadline (TWINCCL_SIM_TIMEOUT_S seconds, default 300): a flow program
// too large to play in reasonable time (an all_to_all over 128 ranks is a single round of 16256
// flows sharing links) is killed and comes back as a TimeoutError that names its size and what to
// do, instead of running for hours. A caller may also stop it (run_in_child's `stop`, asked every
// 50 ms: Ctrl-C in Python's twinccl.run): the child is killed and AbortedError thrown.
#include <poll.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "flow_program.h"
#include "simgrid_run.h"
#include "twinccl/errors.h"
#include "twinccl/output_file.h"
#include "twinccl/plain_decimal.h"

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

constexpr double kDefaultSimTimeoutS = 300.0;
constexpr double kMaxSimTimeoutS = 7 * 24 * 3600.0;

// TWINCCL_SIM_TIMEOUT_S: plain decimal seconds in (0, one week]; unset = 300.
double sim_timeout_s() {
  const char* text = std::getenv("TWINCCL_SIM_TIMEOUT_S");
  if (text == nullptr || *text == '\0') return kDefaultSimTimeoutS;
  const std::optional<double> v = parse_plain_decimal(text);  // " 5", "1e2", "+5" refused
  if (!v || *v <= 0.0 || *v > kMaxSimTimeoutS) {
    throw ConfigError("TWINCCL_SIM_TIMEOUT_S='" + shown_value(text) +
                      "': must be seconds in (0, 604800] as plain decimal digits such as 300 or "
                      "0.5 (the longest a simulation may run)");
  }
  return *v;
}

enum class ReadEnd { done, deadline, stopped };

// Reads both pipes until both close (the child may fill either first), the deadline passes or
// `stop` (asked every kStopPoll when set) says so.
constexpr std::chrono::milliseconds kStopPoll{50};
ReadEnd read_both(int out_fd, int err_fd, std::vector<char>& out, std::string& err,
                  std::chrono::steady_clock::time_point deadline,
                  const std::function<bool()>& stop) {
  constexpr std::size_t kErrKeep = 4096;  // the tail of stderr is what says why
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  char buffer[1 << 16];
  int open_fds = 2;
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return ReadEnd::deadline;
    if (stop && stop()) return ReadEnd::stopped;
    const long long most_ms = stop ? kStopPoll.count() : 60'000;
    const int wait_ms = static_cast<int>(std::min<long long>(left.count(), most_ms));
    const int ready = ::poll(fds, 2, wait_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (ready == 0) continue;
    for (pollfd& p : fds) {
      if (p.fd < 0 || p.revents == 0) continue;
      const ssize_t n = ::read(p.fd, buffer, sizeof buffer);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        p.fd = -1;
        --open_fds;
        continue;
      }
      if (&p == &fds[0]) {
        out.insert(out.end(), buffer, buffer + n);
      } else {
        err.append(buffer, static_cast<std::size_t>(n));
        if (err.size() > 2 * kErrKeep) err.erase(0, err.size() - kErrKeep);
      }
    }
  }
  if (err.size() > kErrKeep) err.erase(0, err.size() - kErrKeep);
  return ReadEnd::done;
}

std::string signal_name(int sig) {
  const char* text = ::strsignal(sig);
  return std::to_string(sig) + (text != nullptr ? " (" + std::string(text) + ")" : "");
}

// The last few lines of the child's stderr, on one line.
std::string stderr_tail(const std::string& err) {
  std::string tail = err;
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
  if (tail.empty()) return "; it printed nothing";
  std::size_t start = tail.size();  // the newline before the 4th line from the end, or 0
  for (int lines = 0; lines < 4; ++lines) {
    const std::size_t nl = start == 0 ? std::string::npos : tail.rfind('\n', start - 1);
    if (nl == std::string::npos) {
      start = 0;
      break;
    }
    start = nl;
  }
  std::string out = tail.substr(start == 0 ? 0 : start + 1);
  for (char& c : out) {
    if (c == '\n') c = '|';
  }
  return "; its last output: " + out;
}

[[noreturn]] void child_main(const std::function<std::vector<double>()>& simulate, int fd) {
  // The caller's crash handlers (a test framework's, a program's) must not run in the child: its
  // death by signal is what the parent reports.
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, SIG_DFL);
  char status = 'E';
  std::string message;
  std::vector<double> payload;
  try {
    payload = simulate();
    status = 'O';
  } catch (const ConfigError& e) {
    status = 'C';
    message = e.what();
  } catch (const DeadlockError& e) {
    status = 'D';
    message = e.what();
  } catch (const InvalidArgument& e) {
    status = 'A';
    message = e.what();
  } catch (const MismatchError& e) {
    status = 'M';
    message = e.what();
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
  return run_in_child(simulate, expected_values, what, "");
}

std::vector<double> run_in_child(const std::function<std::vector<double>()>& simulate,
                                 std::size_t expected_values, const char* what,
                                 const std::string& context) {
  return run_in_child(simulate, expected_values, what, context, {});
}

std::vector<double> run_in_child(const std::function<std::vector<double>()>& simulate,
                                 std::size_t expected_values, const char* what,
                                 const std::string& context, const std::function<bool()>& stop) {
  const std::string prefix = std::string(what) + (context.empty() ? "" : " of " + context);
  const double timeout_s = sim_timeout_s();
  int fds[2];
  int err_fds[2];
  if (::pipe(fds) != 0) {
    throw InternalError(prefix + ": pipe() failed: " + std::strerror(errno));
  }
  if (::pipe(err_fds) != 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw InternalError(prefix + ": pipe() failed: " + std::strerror(errno));
  }
  std::fflush(nullptr);  // or the child's exit would write the caller's buffered output again
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    for (int fd : {fds[0], fds[1], err_fds[0], err_fds[1]}) ::close(fd);
    throw InternalError(prefix + ": fork() failed: " + std::strerror(errno));
  }
  if (pid == 0) {
    // Die with the parent; if it already died (the child was re-parented), leave at once.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(4);
    ::close(fds[0]);
    ::close(err_fds[0]);
    ::dup2(err_fds[1], STDERR_FILENO);
    ::close(err_fds[1]);
    child_main(simulate, fds[1]);
  }
  ::close(fds[1]);
  ::close(err_fds[1]);
  std::vector<char> data;
  std::string err;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(timeout_s));
  const ReadEnd end = read_both(fds[0], err_fds[0], data, err, deadline, stop);
  const bool finished = end == ReadEnd::done;
  ::close(fds[0]);
  ::close(err_fds[0]);
  if (!finished) ::kill(pid, SIGKILL);
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (end == ReadEnd::stopped)
    throw AbortedError(prefix + ": stopped on request (the simulation was killed)");
  if (!finished) {
    char shown[32];
    std::snprintf(shown, sizeof shown, "%g", timeout_s);
    throw TimeoutError(prefix + ": the SimGrid simulation did not finish within " + shown +
                       " s (TWINCCL_SIM_TIMEOUT_S) and was stopped. The flow model plays every "
                       "transfer on every link; for this size use --fidelity analytic, fewer "
                       "ranks (--ranks), or a larger TWINCCL_SIM_TIMEOUT_S");
  }
  if (WIFSIGNALED(wstatus)) {
    throw InternalError(prefix + ": the SimGrid simulation (child process " + std::to_string(pid) +
                        ") was killed by signal " + signal_name(WTERMSIG(wstatus)) +
                        stderr_tail(err) +
                        ". This is a failure inside SimGrid (an assertion or a crash), not a "
                        "problem of the request; please report it with the command that caused it");
  }
  if (!data.empty() && data[0] != 'O' && data[0] != 'E') {  // the request's own error, as its type
    const std::string message(data.data() + 1, data.size() - 1);
    switch (data[0]) {
      case 'C':
        throw ConfigError(message);
      case 'D':
        throw DeadlockError(message);
      case 'A':
        throw InvalidArgument(message);
      case 'M':
        throw MismatchError(message);
      default:
        break;
    }
  }
  if (data.empty() || data[0] != 'O') {
    std::string why = "it ended with exit status " +
                      std::to_string(WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1) +
                      " and no answer" + stderr_tail(err);
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
      2 * n, "flow playback",
      std::to_string(program.nranks) + " ranks, " + std::to_string(n) + " transfers on " +
          std::to_string(program.links.size()) + " links");
  FlowTimes times;
  times.start_s.assign(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(n));
  times.end_s.assign(values.begin() + static_cast<std::ptrdiff_t>(n), values.end());
  return times;
}

}  // namespace twinccl::sim::detail
