// The plot of `twinccl whatif --plot FILE`, drawn by gnuplot (Debian's gnuplot-nox): busbw against
// size per topology for a sweep, one bar per topology for a replay.
//
// How it works. The data goes inline as gnuplot datablocks ($d1 << EOD ... EOD) in one script
// written to gnuplot's standard input (posix_spawn with a pipe: no shell, no temporary files),
// within a deadline (TWINCCL_PLOT_TIMEOUT_S, default 60 s: a gnuplot that hangs is killed). The
// terminal follows the extension: .svg -> svg, .png -> pngcairo. Strings are single-quoted with
// '' for a quote (gnuplot's rule) and control characters dropped, so labels cannot break out.
#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>

#include "flag_values.h"
#include "output_file.h"
#include "twinccl/errors.h"
#include "twinccl/plain_decimal.h"
#include "whatif_report.h"

extern char** environ;

namespace twinccl::cli {
namespace {

constexpr const char* kInstall =
    "--plot needs gnuplot, which is not installed (or not on PATH): install it with "
    "`apt-get install gnuplot-nox` (scripts/install-deps.sh --tests does), or leave --plot out";

std::string find_gnuplot() {
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    const std::size_t end = std::min(dirs.find(':', start), dirs.size());
    const std::string dir = dirs.substr(start, end - start);
    if (!dir.empty()) {
      const std::string candidate = dir + "/gnuplot";
      if (::access(candidate.c_str(), X_OK) == 0) return candidate;
    }
    start = end + 1;
  }
  return "";
}

std::string gnuplot_string(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c == '\'' ? std::string("''") : std::string(1, c);
  }
  return out + "'";
}

std::string terminal_for(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  if (ext == ".svg" || ext == ".SVG") {
    return "set terminal svg size 960,600 dynamic font 'sans,12' noenhanced background '#ffffff'";
  }
  if (ext == ".png" || ext == ".PNG") {
    return "set terminal pngcairo size 960,600 font 'sans,11' noenhanced";
  }
  throw ConfigError("--plot '" + shown(path) + "': the file must end in .svg or .png");
}

std::string sweep_script(const WhatifStudy& s) {
  std::string script =
      "set title " + gnuplot_string("busbw, " + s.subject + ", " + s.fidelity + " model") +
      "\nset xlabel 'size (bytes)'\nset ylabel 'busbw (GB/s)'\nset logscale x 2\n"
      "set format x '%.0b%B'\nset key top left box opaque\nset grid\nset yrange [0:*]\n";
  std::string plot;
  for (std::size_t v = 0; v < s.variants.size(); ++v) {
    std::string data;
    for (const WhatifRow& row : s.rows) {
      if (row.cells[v] && row.cells[v]->bytes > 0) {
        data += fmt::format("{} {:.6g}\n", row.cells[v]->bytes, row.cells[v]->busbw_gbps);
      }
    }
    if (data.empty()) continue;
    script += fmt::format("$d{} << EOD\n{}EOD\n", v + 1, data);
    plot += fmt::format("{}$d{} using 1:2 with linespoints lw 2 pt 7 ps 0.6 title {}",
                        plot.empty() ? "plot " : ", \\\n     ", v + 1,
                        gnuplot_string(fmt::format("[{}] {}", v + 1, s.variants[v].label)));
  }
  if (plot.empty()) throw InvalidArgument("--plot: no size has a result to draw");
  return script + plot + "\n";
}

// Horizontal bars, one per topology from the top, its label at the left (no rotated text to
// make room for): boxxyerror from x = 0 to the time, y = index +- 0.3.
std::string replay_script(const WhatifStudy& s) {
  std::string data;
  std::string labels;
  std::size_t widest = 0;
  for (std::size_t v = 0; v < s.variants.size(); ++v) {
    const WhatifCell& c = *s.rows.front().cells[v];
    data += fmt::format("{} {:.6g}\n", v, c.time_us / 1000.0);
    // Tic labels are format strings to gnuplot: a '%' ("=25%") is written '%%'.
    const std::string label = fmt::format("[{}] {}", v + 1, s.variants[v].label);
    widest = std::max(widest, label.size());
    std::string escaped;
    for (char ch : label) escaped += ch == '%' ? std::string("%%") : std::string(1, ch);
    labels += fmt::format("{}{} {}", labels.empty() ? "" : ", ", gnuplot_string(escaped), v);
  }
  return "set title " +
         gnuplot_string("trace " + s.subject + " replayed, " + s.fidelity + " model") +
         "\nset xlabel 'time (ms)'\nset style fill solid 0.6 border -1\nunset key\n"
         "set xrange [0:*]\nset grid xtics\n" +
         fmt::format("set yrange [{}:-0.6]\nset lmargin {}\n",
                     static_cast<double>(s.variants.size()) - 0.4,
                     std::min<std::size_t>(widest, 60) + 2) +
         "set ytics (" + labels + ")\n$d << EOD\n" + data +
         "EOD\nplot $d using ($2/2):1:(0):2:($1-0.3):($1+0.3) with boxxyerror\n";
}

// TWINCCL_PLOT_TIMEOUT_S: how long gnuplot may take (plain decimal seconds, default 60).
double plot_timeout_s() {
  const char* text = std::getenv("TWINCCL_PLOT_TIMEOUT_S");
  if (text == nullptr || *text == '\0') return 60.0;
  const std::optional<double> v = parse_plain_decimal(text);
  if (!v || *v <= 0.0 || *v > 86400.0) {
    throw ConfigError("TWINCCL_PLOT_TIMEOUT_S='" + shown_value(text) +
                      "': must be seconds in (0, 86400] as plain decimal digits such as 60 or 0.5 "
                      "(the longest gnuplot may take to draw --plot)");
  }
  return *v;
}

// Writes `script` to the pipe `fd` (non-blocking) and waits for `pid`, both before `deadline`;
// false when the deadline passed (the caller kills the child).
bool feed_and_wait(int fd, const std::string& script, pid_t pid, int& status, bool& all_written,
                   std::chrono::steady_clock::time_point deadline) {
  using std::chrono::steady_clock;
  auto left_ms = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - steady_clock::now())
        .count();
  };
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  std::size_t written = 0;
  while (written < script.size()) {
    if (left_ms() <= 0) {
      ::close(fd);
      return false;
    }
    pollfd p{fd, POLLOUT, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left_ms(), 100)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t n = ::write(fd, script.data() + written, script.size() - written);
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (n <= 0) break;  // gnuplot closed its input (it failed; its message is on stderr)
    written += static_cast<std::size_t>(n);
  }
  ::close(fd);
  all_written = written == script.size();
  while (true) {
    const pid_t got = ::waitpid(pid, &status, WNOHANG);
    if (got == pid) return true;
    if (got < 0 && errno != EINTR) return true;  // not our child any more: nothing to wait for
    if (left_ms() <= 0) return false;
    ::usleep(10'000);
  }
}

// gnuplot draws `script` into `file` (the temporary file beside `path`, the name the user gave)
// within TWINCCL_PLOT_TIMEOUT_S; past it gnuplot is killed and the plot is an error.
void run_gnuplot(const std::string& gnuplot, const std::string& script, const std::string& path,
                 const std::string& file) {
  const double timeout_s = plot_timeout_s();
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw Error(std::string("--plot: pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[0], STDIN_FILENO);
  std::string arg0 = "gnuplot";
  char* argv[] = {arg0.data(), nullptr};
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, gnuplot.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[0]);
  if (rc != 0) {
    ::close(fds[1]);
    throw ConfigError("--plot: cannot start " + shown_value(gnuplot) + ": " + std::strerror(rc));
  }
  // gnuplot dying early must not kill us with SIGPIPE: ignore it around the write.
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &old);
  int status = 0;
  bool all_written = false;
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::microseconds(static_cast<long long>(timeout_s * 1e6));
  const bool finished = feed_and_wait(fds[1], script, pid, status, all_written, deadline);
  ::sigaction(SIGPIPE, &old, nullptr);
  if (!finished) {
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    throw Error(
        fmt::format("--plot '{}': gnuplot did not finish within {:g} s and was stopped "
                    "(TWINCCL_PLOT_TIMEOUT_S sets the limit)",
                    shown(path), timeout_s));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !all_written) {
    throw ConfigError("--plot '" + shown(path) + "': gnuplot failed (its message is above)");
  }
  std::error_code ec;
  if (std::filesystem::file_size(file, ec) == 0 || ec) {
    throw ConfigError("--plot '" + shown(path) + "': gnuplot wrote no file there");
  }
}

}  // namespace

void check_whatif_plot_possible(const std::string& path) {
  terminal_for(path);
  if (find_gnuplot().empty()) throw ConfigError(kInstall);
  if (path.find('\n') != std::string::npos || path.find('\r') != std::string::npos) {
    throw ConfigError("--plot: a file name with a line break");
  }
}

void write_whatif_plot(const WhatifStudy& study, const std::string& path) {
  check_whatif_plot_possible(path);
  const std::string body = study.replay ? replay_script(study) : sweep_script(study);
  // Drawn into a temporary file renamed over `path` when complete (output_file.h): a failing
  // gnuplot leaves no half-drawn file.
  write_output_file_by("--plot", path, [&](const std::string& file) {
    const std::string script =
        terminal_for(path) + "\nset output " + gnuplot_string(file) + "\n" + body + "set output\n";
    run_gnuplot(find_gnuplot(), script, path, file);
  });
}

}  // namespace twinccl::cli
