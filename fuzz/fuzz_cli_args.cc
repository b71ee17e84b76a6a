// Fuzz target: the whole `twinccl` program (cli/run_main.cc) on an arbitrary command line. The
// input is the argument list, one argument per line ("compare\na.log\n-t\nh100-cluster-2"):
// parsing, checks and dispatch of perf, topo, algo, replay, compare and whatif, and the run
// itself. Any exit code is fine (0, 1 or 2) as long as the program returns: a crash, an abort,
// UB or a hang is the finding. Its output is thrown away.
//
// So that one input stays a few milliseconds and touches nothing outside a scratch folder:
//   * the program runs in a fresh folder under $TMPDIR holding t.json (a trace), a.log (an
//     nccl-tests log) and topo.json (a topology), copied from the seed corpora at start;
//   * an input with an argument containing '/' is skipped (no file outside that folder, no
//     /dev/stdin to block on), as is one containing "emu" (the emulator moves real bytes on
//     threads: its flags are parsed by the same code as the simulator's), or "plot" (gnuplot);
//   * at most 64 arguments, no NUL byte in one (a real argv has none), and the first one names a
//     command or asks for help (`twinccl` alone or `twinccl --` runs the default sweep: seconds);
//   * perf gets "--check-max 4K" appended (the last value of a flag counts, as in nccl-tests): the
//     #wrong check runs each size up to 256M on emulated ranks by default, seconds per input.
// The output files a command may write (-J, --trace) land in the scratch folder, removed at exit.
//
// (libFuzzer reads and writes its corpus folders as it goes: give them as absolute paths, as
// scripts/fuzz.sh does.)
//
//   fuzz_cli_args --seconds 8 fuzz/corpus/cli_args
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "fuzz_cli_support.h"

namespace {

std::filesystem::path g_scratch;  // removed at exit

constexpr std::size_t kMaxArguments = 64;

void copy_seed(const std::filesystem::path& from, const char* to) {
  std::error_code ec;
  std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing, ec);
  if (ec)
    std::fprintf(stderr, "fuzz_cli_args: cannot copy %s: %s\n", from.c_str(), ec.message().c_str());
}

// Once per process: a scratch folder with the files the seeds name, made the working directory.
void enter_scratch_folder() {
  static const bool done = [] {
    const std::filesystem::path source = TWINCCL_SOURCE_DIR;
    std::string dir = (std::filesystem::temp_directory_path() / "twinccl-fuzz-cli-XXXXXX").string();
    if (mkdtemp(dir.data()) == nullptr || chdir(dir.c_str()) != 0) {
      std::perror("fuzz_cli_args: scratch folder");
      std::abort();
    }
    g_scratch = dir;
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(g_scratch, ec);
    });
    copy_seed(source / "fuzz/corpus/trace_json/quickstart_4ranks.json", "t.json");
    copy_seed(source / "fuzz/corpus/nccl_tests_log/a100-sxm4-80gb-1node-all_reduce-mpi8.log",
              "a.log");
    copy_seed(source / "fuzz/corpus/topology_json/two-node-pcie.json", "topo.json");
    return true;
  }();
  (void)done;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  enter_scratch_folder();
  std::vector<std::string> args{"twinccl"};
  std::string current;
  for (std::size_t i = 0; i <= size; ++i) {
    if (i == size || data[i] == '\n') {
      if (current.find('/') != std::string::npos || current.find("emu") != std::string::npos ||
          current.find("plot") != std::string::npos) {
        return 0;
      }
      args.push_back(current);
      current.clear();
      if (args.size() > kMaxArguments) return 0;
    } else {
      current += static_cast<char>(data[i]);
    }
  }
  if (args.size() == 1) return 0;
  for (const std::string& a : args) {
    if (a.find('\0') != std::string::npos) return 0;
  }
  static const std::set<std::string> kFirst = {"perf",    "topo",   "algo", "replay",
                                               "compare", "whatif", "-h",   "--help"};
  if (kFirst.count(args[1]) == 0) return 0;
  if (args[1] == "perf") {
    args.emplace_back("--check-max");
    args.emplace_back("4K");
  }
  std::string err;
  const int code = twinccl::fuzz::run_main_captured(args, &err);
  if (code < 0 || code > 2) {
    std::fprintf(stderr, "fuzz_cli_args: exit code %d\n", code);
    std::abort();
  }
  // Every error is one bounded line (cli/run_main.cc); a megabyte echo of the input is a finding.
  if (err.size() > 64 * 1024) {
    std::fprintf(stderr, "fuzz_cli_args: %zu bytes on stderr: %.300s\n", err.size(), err.c_str());
    std::abort();
  }
  if (std::getenv("TWINCCL_FUZZ_SHOW_ERRORS") != nullptr && code == 1)
    std::fprintf(stderr, "exit 1: %.500s", err.c_str());
  return 0;
}
