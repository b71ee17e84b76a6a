// A plain mutation driver for the fuzz targets, for builds without clang's libFuzzer.
//
//   fuzz_topology_json --seconds 8 fuzz/corpus/topology_json     # CTest runs this
//   fuzz_topology_json crash-input.json                           # replay one file
//
// How it works: every seed file (a file, or every file of a folder) runs once as it is; then,
// until the time is up, a random seed is mutated (bit flips, byte runs inserted, erased or
// duplicated, splices of two seeds, and tokens that hostile inputs are made of: deep nesting,
// huge and non-finite numbers, long strings) and run. Each input runs under an alarm
// (--max-input-seconds, default 10): a hang is a finding too. On a crash, an abort or an alarm,
// the input is written to fuzz-finding-<pid> in the working directory (async-signal-safe) and
// the signal is re-raised, so CTest reports a failure and the file reproduces it.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

using Input = std::vector<uint8_t>;

// The input being run, for the signal handler (no allocation there).
const uint8_t* g_current = nullptr;
size_t g_current_size = 0;

// Where a finding is written: absolute, set before the first input runs (a target may change the
// working directory, fuzz_cli_args does).
char g_finding_path[4096] = "fuzz-finding";

void on_fatal_signal(int sig) {
  const char* path = g_finding_path;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    size_t done = 0;
    while (g_current != nullptr && done < g_current_size) {
      ssize_t n = write(fd, g_current + done, g_current_size - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    close(fd);
  }
  const char* what = sig == SIGALRM
                         ? "fuzz: input ran past its time limit (a hang); input saved to "
                         : "fuzz: crash or abort; input saved to ";
  ssize_t ignored = write(STDERR_FILENO, what, std::strlen(what));
  ignored = write(STDERR_FILENO, path, std::strlen(path));
  ignored = write(STDERR_FILENO, "\n", 1);
  (void)ignored;
  std::signal(sig == SIGALRM ? SIGABRT : sig, SIG_DFL);
  raise(sig == SIGALRM ? SIGABRT : sig);
}

Input read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return Input(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

const char* const kTokens[] = {"1e309",
                               "-1e309",
                               "1e308",
                               "4.9e-324",
                               "NaN",
                               "-0",
                               "18446744073709551615",
                               "18446744073709551616",
                               "9223372036854775807",
                               "-9223372036854775808",
                               "4294967296",
                               "2147483648",
                               "-1",
                               "0",
                               "0x10",
                               "\"\"",
                               "null",
                               "true",
                               "[]",
                               "{}",
                               "\"\\u0000\"",
                               "\"\\ud800\"",
                               "<",
                               ">",
                               "</",
                               "/>",
                               "=\"",
                               "<!--",
                               "]]>",
                               "&amp;",
                               "\xff\xfe",
                               "\0"};

class Mutator {
 public:
  explicit Mutator(uint64_t seed) : rng_(seed) {}

  Input mutate(const std::vector<Input>& seeds) {
    Input x = seeds[pick(seeds.size())];
    int rounds = 1 + static_cast<int>(pick(4));
    for (int i = 0; i < rounds; ++i) mutate_once(x, seeds);
    if (x.size() > kMaxInput) x.resize(kMaxInput);
    return x;
  }

 private:
  static constexpr size_t kMaxInput = 1 << 20;

  size_t pick(size_t n) {
    return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng_);
  }

  void insert(Input& x, size_t at, const Input& what) {
    x.insert(x.begin() + static_cast<long>(at), what.begin(), what.end());
  }

  void mutate_once(Input& x, const std::vector<Input>& seeds) {
    size_t at = pick(x.size() + 1);
    switch (pick(9)) {
      case 0:  // flip a bit
        if (!x.empty()) x[pick(x.size())] ^= static_cast<uint8_t>(1u << pick(8));
        break;
      case 1:  // random byte
        if (!x.empty()) x[pick(x.size())] = static_cast<uint8_t>(pick(256));
        break;
      case 2: {  // erase a run
        if (x.empty()) break;
        size_t from = pick(x.size());
        size_t n = 1 + pick(std::min<size_t>(64, x.size() - from));
        x.erase(x.begin() + static_cast<long>(from), x.begin() + static_cast<long>(from + n));
        break;
      }
      case 3: {  // duplicate a run
        if (x.empty()) break;
        size_t from = pick(x.size());
        size_t n = 1 + pick(std::min<size_t>(256, x.size() - from));
        Input run(x.begin() + static_cast<long>(from), x.begin() + static_cast<long>(from + n));
        insert(x, at, run);
        break;
      }
      case 4: {  // a hostile token
        const char* t = kTokens[pick(std::size(kTokens))];
        Input tok(t, t + std::max<size_t>(1, std::strlen(t)));
        insert(x, at, tok);
        break;
      }
      case 5: {  // replace a number-looking run with a token
        const char* t = kTokens[pick(8)];
        size_t from = pick(x.size() + 1);
        size_t to = from;
        while (to < x.size() &&
               (std::isdigit(x[to]) || x[to] == '.' || x[to] == 'e' || x[to] == '-'))
          ++to;
        x.erase(x.begin() + static_cast<long>(from), x.begin() + static_cast<long>(to));
        insert(x, from, Input(t, t + std::strlen(t)));
        break;
      }
      case 6: {  // deep nesting
        const char* open[] = {"[", "{\"a\":", "<a>"};
        const char* o = open[pick(3)];
        size_t depth = 1 + pick(pick(2) ? 100 : 100000);
        Input run;
        for (size_t i = 0; i < depth; ++i) run.insert(run.end(), o, o + std::strlen(o));
        insert(x, at, run);
        break;
      }
      case 7: {  // splice with another seed
        const Input& other = seeds[pick(seeds.size())];
        if (other.empty()) break;
        size_t from = pick(other.size());
        Input run(other.begin() + static_cast<long>(from), other.end());
        x.resize(at);
        x.insert(x.end(), run.begin(), run.end());
        break;
      }
      default: {  // a long string
        Input run(1 + pick(pick(2) ? 64 : 200000), static_cast<uint8_t>('A' + pick(26)));
        insert(x, at, run);
        break;
      }
    }
  }

  std::mt19937_64 rng_;
};

void run_one(const Input& x, unsigned max_input_seconds) {
  g_current = x.data();
  g_current_size = x.size();
  alarm(max_input_seconds);
  LLVMFuzzerTestOneInput(x.data(), x.size());
  alarm(0);
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 0;
  unsigned max_input_seconds = 10;
  uint64_t seed = std::random_device{}();
  std::vector<Input> seeds;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if ((arg == "--seconds" || arg == "--max-input-seconds" || arg == "--seed") && i + 1 < argc) {
      char* end = nullptr;
      const char* value = argv[++i];
      if (arg == "--seconds")
        seconds = std::strtod(value, &end);
      else if (arg == "--seed")
        seed = std::strtoull(value, &end, 10);
      else
        max_input_seconds = static_cast<unsigned>(std::strtoul(value, &end, 10));
      if (end == value || *end != '\0') {
        std::fprintf(stderr, "fuzz driver: %s needs a number, got '%s'\n", arg.c_str(), value);
        return 2;
      }
      continue;
    }
    std::error_code ec;
    if (std::filesystem::is_directory(arg, ec)) {
      for (const auto& entry : std::filesystem::directory_iterator(arg))
        if (entry.is_regular_file()) seeds.push_back(read_file(entry.path()));
    } else if (std::filesystem::is_regular_file(arg, ec)) {
      seeds.push_back(read_file(arg));
    } else {
      std::fprintf(
          stderr,
          "fuzz driver: '%s' is neither a seed file, a folder of seeds nor an option\n"
          "usage: %s [--seconds S] [--max-input-seconds S] [--seed N] SEED_FILE_OR_DIR...\n",
          arg.c_str(), argv[0]);
      return 2;
    }
  }
  char cwd[3900];
  std::snprintf(g_finding_path, sizeof g_finding_path, "%s/fuzz-finding-%d",
                getcwd(cwd, sizeof cwd) != nullptr ? cwd : ".", static_cast<int>(getpid()));
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGALRM})
    std::signal(sig, on_fatal_signal);
  if (seeds.empty()) seeds.emplace_back();
  for (const Input& s : seeds) run_one(s, max_input_seconds);
  size_t runs = seeds.size();
  Mutator mutator(seed);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    run_one(mutator.mutate(seeds), max_input_seconds);
    ++runs;
  }
  std::printf("fuzz driver: %zu inputs (%zu seeds, seed %llu), no finding\n", runs, seeds.size(),
              static_cast<unsigned long long>(seed));
  return 0;
}
