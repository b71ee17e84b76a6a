// Out of memory (docs/misuse.md 58-60): an allocation that fails on a rank (its buffers, the
// binding's or the emulator's own copies, a thread's stack) ends the run with ResourceError naming
// what, how many bytes and which rank; the other ranks wake with AbortedError carrying it; nothing
// terminates the process. Real exhaustion runs in a forked child whose address space is capped
// (setrlimit RLIMIT_AS) and reports back through a pipe; outcomes are recorded on the rank
// threads and asserted on the test thread. Sanitizers reserve terabytes of address space, so
// under them the capped tests are reported Skipped (support/skip.h).
#include <pthread.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <new>

#include "support/skip.h"
#include "test_misuse_support.h"

using namespace twinccl;
using namespace twinccl::testing;
using Catch::Matchers::Contains;

namespace {

bool skipped_under_sanitizer() {
  if (!twinccl_test::kSanitizerBuild) return false;
  twinccl_test::skip_test(
      "a sanitizer reserves more address space than any cap (RLIMIT_AS) that would still let "
      "this test allocate");
  return true;
}

std::size_t virtual_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0;
  statm >> pages;
  return pages * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

struct Child {
  bool exited = false;
  int exit_code = -1;
  int signal = 0;
  std::string report;  // what the scenario returned
};

// Runs `scenario` in a forked child whose address space may grow by `headroom_bytes` only.
Child in_capped_child(std::size_t headroom_bytes, const std::function<std::string()>& scenario) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  std::cout.flush();
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[0]);
    rlimit cap{};
    cap.rlim_cur = cap.rlim_max = virtual_bytes() + headroom_bytes;
    std::string report = setrlimit(RLIMIT_AS, &cap) == 0 ? scenario() : "setrlimit failed";
    std::size_t at = 0;
    while (at < report.size()) {
      ssize_t wrote = write(fds[1], report.data() + at, report.size() - at);
      if (wrote <= 0) break;
      at += static_cast<std::size_t>(wrote);
    }
    _exit(0);
  }
  close(fds[1]);
  Child child;
  char chunk[4096];
  for (ssize_t got; (got = read(fds[0], chunk, sizeof chunk)) > 0;)
    child.report.append(chunk, static_cast<std::size_t>(got));
  close(fds[0]);
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  child.exited = WIFEXITED(status);
  child.exit_code = child.exited ? WEXITSTATUS(status) : -1;
  child.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return child;
}

std::string type_of(const std::exception& e) {
  if (dynamic_cast<const ResourceError*>(&e)) return "ResourceError";
  if (dynamic_cast<const AbortedError*>(&e)) return "AbortedError";
  if (dynamic_cast<const Error*>(&e)) return "Error";
  if (dynamic_cast<const std::bad_alloc*>(&e)) return "std::bad_alloc";
  return "std::exception";
}

// Runs `fn` on n ranks; returns one line per rank ("rank 2: AbortedError: ...") then the run's
// own outcome ("run: ResourceError: ..."). Every rank rethrows what it caught.
std::string outcomes(int n, const std::function<void(Communicator&)>& fn) {
  std::mutex mu;
  std::vector<std::string> lines(static_cast<std::size_t>(n), "returned");
  std::string run_line = "run: returned";
  try {
    emu::EmulatorOptions o;
    o.world_size = n;
    o.timeout_s = 20;
    emu::run_world(o, [&](Communicator& c) {
      try {
        fn(c);
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(mu);
        lines[static_cast<std::size_t>(c.rank())] = type_of(e) + ": " + e.what();
        throw;
      }
    });
  } catch (const std::exception& e) {
    run_line = "run: " + type_of(e) + ": " + e.what();
  }
  std::string text;
  for (int r = 0; r < n; ++r)
    text += "rank " + std::to_string(r) + ": " + lines[static_cast<std::size_t>(r)] + "\n";
  return text + run_line + "\n";
}

// The line of `report` that starts with "<who>: ", without that prefix.
std::string line_of(const std::string& report, const std::string& who) {
  std::string whole = "\n" + report;
  auto at = whole.find("\n" + who + ": ");
  if (at == std::string::npos) return "";
  at += who.size() + 3;
  return whole.substr(at, whole.find('\n', at) - at);
}

constexpr std::size_t kHeadroom = std::size_t{256} << 20;
constexpr std::size_t kTooMany = std::size_t{1} << 28;  // float32 elements: 1 GiB

}  // namespace

TEST_CASE("misuse 58: a buffer that cannot be allocated is a ResourceError on every rank",
          "[emu][misuse][memory]") {
  if (skipped_under_sanitizer()) return;
  Child child = in_capped_child(kHeadroom, [] {
    return outcomes(4, [](Communicator& c) {
      c.barrier();
      Buffer b = c.alloc(kTooMany, DataType::float32);
      c.all_reduce(b, b);
    });
  });
  INFO(child.report);
  REQUIRE(child.exited);
  CHECK(child.exit_code == 0);
  for (int r = 0; r < 4; ++r) {
    std::string line = line_of(child.report, "rank " + std::to_string(r));
    CHECK_THAT(line, Contains("ResourceError: comm 'world' rank " + std::to_string(r) +
                              ": alloc(268435456, float32): could not allocate 1073741824 bytes "
                              "(1.0 GiB): out of memory (std::bad_alloc; ") &&
                         Contains("ulimit -v"));
  }
  CHECK_THAT(line_of(child.report, "run"), Contains("ResourceError: comm 'world' rank "));
}

TEST_CASE("misuse 59: a rank out of memory while its peers wait in a collective",
          "[emu][misuse][memory]") {
  if (skipped_under_sanitizer()) return;
  bool own_code = GENERATE(false, true);
  CAPTURE(own_code);
  Child child = in_capped_child(kHeadroom, [own_code] {
    return outcomes(4, [own_code](Communicator& c) {
      std::vector<float> x(1024, 1.0f);
      c.all_reduce(x.data(), x.data(), x.size(), DataType::float32, ReduceOp::sum());
      if (c.rank() == 1) {
        if (own_code) {
          std::vector<char> huge(kTooMany * 4, 1);  // the rank's own allocation
          x[0] = huge[7];
        } else {
          Buffer b = c.alloc(kTooMany, DataType::float32);
        }
      }
      c.all_reduce(x.data(), x.data(), x.size(), DataType::float32, ReduceOp::sum());
    });
  });
  INFO(child.report);
  REQUIRE(child.exited);
  CHECK(child.exit_code == 0);
  std::string cause = own_code ? "rank 1 of 4 ran out of memory (std::bad_alloc) in its function"
                               : "comm 'world' rank 1: alloc(268435456, float32): could not "
                                 "allocate 1073741824 bytes";
  CHECK_THAT(line_of(child.report, "rank 1"), Contains(own_code ? "std::bad_alloc" : cause));
  for (int r : {0, 2, 3}) {
    std::string line = line_of(child.report, "rank " + std::to_string(r));
    CHECK_THAT(line, Contains("AbortedError: ") && Contains("rank 1 failed: "));
  }
  CHECK_THAT(line_of(child.report, "run"), Contains("ResourceError: " + cause));
}

TEST_CASE("misuse 60: threads that cannot be created for lack of address space",
          "[emu][misuse][memory]") {
  if (skipped_under_sanitizer()) return;
  // 64 ranks reserve 64 thread stacks (8 MiB each under the usual ulimit -s): room for 8 is left.
  pthread_attr_t attr;
  REQUIRE(pthread_attr_init(&attr) == 0);
  std::size_t stack_bytes = 0;
  REQUIRE(pthread_attr_getstacksize(&attr, &stack_bytes) == 0);
  pthread_attr_destroy(&attr);
  Child child = in_capped_child(8 * stack_bytes,
                                [] { return outcomes(64, [](Communicator& c) { c.barrier(); }); });
  INFO(child.report);
  REQUIRE(child.exited);
  CHECK(child.exit_code == 0);
  CHECK_THAT(line_of(child.report, "run"),
             Contains("ResourceError: could not start the thread of rank ") && Contains("of 64") &&
                 Contains("address-space limit, ulimit -v"));
}

TEST_CASE("misuse 61: out of memory inside an operation (fault injection)",
          "[emu][misuse][memory]") {
  CheckOptions o = with_timeout(10.0);
  o.fault_hook = [](const FaultPoint& p) {
    if (p.stage == FaultStage::in_collective && p.rank == 2 && p.seq == 1) throw std::bad_alloc();
    return FaultAction::proceed;
  };
  std::string run_error;
  auto out = misuse_run(
      4,
      [](Communicator& c) {
        std::vector<float> x(8192, 1.0f);  // past the led small path: every rank runs its share
        for (int i = 0; i < 3; ++i)
          c.all_reduce(x.data(), x.data(), x.size(), DataType::float32, ReduceOp::sum());
      },
      o, &run_error);
  INFO(out[2].message);
  CHECK(out[2].type == "Error");  // ResourceError (the harness names the common types only)
  CHECK_THAT(out[2].message,
             Contains("all_reduce #1 on comm 'world' rank 2 (") &&
                 Contains("out of memory (std::bad_alloc) while running it on rank 2"));
  for (int r : {0, 1, 3}) {
    INFO(out[static_cast<std::size_t>(r)].message);
    CHECK(out[static_cast<std::size_t>(r)].type == "AbortedError");
    CHECK_THAT(out[static_cast<std::size_t>(r)].message,
               Contains("rank 2 failed: out of memory (std::bad_alloc)"));
  }
}
