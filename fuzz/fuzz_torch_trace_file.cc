// Fuzz target: `twinccl import-torch-trace` on the files themselves, as a user runs it
// (cli/import_torch_command.cc): each file opened, a gzip one (magic 1f 8b) inflated as it is
// read (zlib) and streamed into the importer, then the trace checked and written. The input is one
// file, or several separated by a line "--8<--" (one per rank, at most 8), written to a scratch
// folder as r0.json.gz, r1.json.gz, ... (the name does not matter: the magic bytes do); the last
// byte, when it is 'R', adds --replicate-missing-ranks. Accepted: exit 0, or exit 2 with one
// bounded line; a crash, a hang, an untyped exception (exit 1 "internal error") or a decompression
// bomb inflated past its ratio cap is a finding.
//
//   fuzz_torch_trace_file --seconds 8 fuzz/corpus/torch_trace_file
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "commands.h"
#include "fuzz_cli_support.h"

namespace {

std::filesystem::path g_scratch;  // removed at exit

const std::filesystem::path& scratch_folder() {
  static const bool done = [] {
    std::string dir =
        (std::filesystem::temp_directory_path() / "twinccl-fuzz-torch-XXXXXX").string();
    if (mkdtemp(dir.data()) == nullptr) {
      std::perror("fuzz_torch_trace_file: scratch folder");
      std::abort();
    }
    g_scratch = dir;
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(g_scratch, ec);
    });
    return true;
  }();
  (void)done;
  return g_scratch;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::filesystem::path& dir = scratch_folder();
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> args{"twinccl", "import-torch-trace"};
  if (!text.empty() && text.back() == 'R') {
    args.emplace_back("--replicate-missing-ranks");
    text.remove_suffix(1);
  }
  std::size_t from = 0;
  for (int i = 0;; ++i) {
    const std::size_t cut = text.find("\n--8<--\n", from);
    const std::string path = (dir / ("r" + std::to_string(i) + ".json.gz")).string();
    std::ofstream(path, std::ios::binary)
        << text.substr(from, cut == text.npos ? text.npos : cut - from);
    args.push_back(path);
    if (cut == text.npos || i == 7) break;
    from = cut + 8;
  }
  const std::string output = (dir / "out.trace.json").string();
  args.insert(args.end(), {"-o", output});
  std::string err;
  const int code = twinccl::fuzz::run_main_captured(args, &err);
  // 0: imported; 2: refused with a typed error. 1 is an internal error (an untyped exception).
  if (code != 0 && code != 2) {
    std::fprintf(stderr, "fuzz_torch_trace_file: exit code %d: %.1000s\n", code, err.c_str());
    std::abort();
  }
  if (err.size() > 4096) {
    std::fprintf(stderr, "fuzz_torch_trace_file: %zu bytes on stderr: %.300s\n", err.size(),
                 err.c_str());
    std::abort();
  }
  return 0;
}
