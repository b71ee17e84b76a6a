// Shared by the misuse tests (docs/misuse.md lists every scenario by number): run a program,
// demand that every rank returns within 2 s, and look at what each rank got.
#pragma once

#include <catch2/catch.hpp>
#include <mutex>
#include <string>
#include <vector>

#include "support/harness.h"
#include "support/skip.h"
#include "twinccl/errors.h"

namespace twinccl::testing {

// 2 s, as issue 4 asks; sanitizer builds run everything several times slower, so they get 10 s.
inline constexpr double kEveryRankWithin_s = twinccl_test::kSanitizerBuild ? 10.0 : 2.0;

// CheckOptions with a timeout (designated initializers of a partial struct warn under -Wextra).
inline CheckOptions with_timeout(double timeout_s) {
  CheckOptions o;
  o.timeout_s = timeout_s;
  return o;
}

// Runs `fn` on n ranks (timeout 10 s unless given) and checks that every rank returned in time.
inline std::vector<RankOutcome> misuse_run(int n, const RankFunction& fn,
                                           const CheckOptions& options = with_timeout(10.0),
                                           std::string* run_error = nullptr) {
  auto outcomes = run_ranks_capture(n, fn, options, run_error);
  for (std::size_t r = 0; r < outcomes.size(); ++r) {
    INFO("rank " << r << " returned after " << outcomes[r].seconds << " s with " << outcomes[r].type
                 << ": " << outcomes[r].message);
    CHECK(outcomes[r].seconds < kEveryRankWithin_s);
  }
  return outcomes;
}

// What a rank caught itself (programs that handle their errors and return normally, as a
// resilient client does: the point is that the peers still learn the cause at once).
struct Caught {
  std::string type;
  std::string message;
};

class CaughtByRank {
 public:
  explicit CaughtByRank(int n) : caught_(static_cast<std::size_t>(n)) {}
  // Runs fn; a TwinCCL error is recorded for the rank and swallowed.
  template <class Fn>
  void run(int rank, Fn&& fn) {
    try {
      fn();
    } catch (const Error& e) {
      std::lock_guard<std::mutex> lock(mu_);
      caught_[static_cast<std::size_t>(rank)] = {type_name(e), e.what()};
    }
  }
  const Caught& operator[](int rank) const { return caught_[static_cast<std::size_t>(rank)]; }

 private:
  static std::string type_name(const Error& e) {
    if (dynamic_cast<const DeadlockError*>(&e)) return "DeadlockError";
    if (dynamic_cast<const MismatchError*>(&e)) return "MismatchError";
    if (dynamic_cast<const TimeoutError*>(&e)) return "TimeoutError";
    if (dynamic_cast<const AbortedError*>(&e)) return "AbortedError";
    if (dynamic_cast<const InvalidArgument*>(&e)) return "InvalidArgument";
    if (dynamic_cast<const ResourceError*>(&e)) return "ResourceError";
    return "Error";
  }
  std::mutex mu_;
  std::vector<Caught> caught_;
};

// CheckOptions at a check level (with a timeout).
inline CheckOptions checks(CheckLevel level, double timeout_s = 10.0) {
  CheckOptions o = with_timeout(timeout_s);
  o.check = level;
  return o;
}

// n copies of v, for Buffer::fill_from_host.
inline std::vector<float> filled(std::size_t n, float v) { return std::vector<float>(n, v); }

// "test_misuse_x.cc:42" as describe_call_site() writes it.
inline std::string site(const char* file, int line) {
  std::string f = file;
  auto slash = f.find_last_of('/');
  return (slash == std::string::npos ? f : f.substr(slash + 1)) + ":" + std::to_string(line);
}

// Every rank got InvalidArgument, and its message holds each of `parts`.
inline void all_invalid(const std::vector<RankOutcome>& out,
                        const std::vector<std::string>& parts) {
  for (std::size_t r = 0; r < out.size(); ++r) {
    INFO("rank " << r << ": " << out[r].type << ": " << out[r].message);
    CHECK(out[r].type == "InvalidArgument");
    for (const auto& p : parts) CHECK_THAT(out[r].message, Catch::Matchers::Contains(p));
  }
}

}  // namespace twinccl::testing
