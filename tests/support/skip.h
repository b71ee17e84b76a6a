// A test that cannot check what it is for on this machine or build (no gnuplot, a sanitizer build)
// says so and returns, and is reported as Skipped, never as Passed:
//
//   if (!gnuplot_installed()) return twinccl_test::skip_test("gnuplot is not installed");
//
// skip_test prints "TWINCCL-TEST-SKIPPED: <why>" on standard output, which every CTest entry of
// the test executables matches with SKIP_REGULAR_EXPRESSION (tests/CMakeLists.txt). Catch2 v2 has
// no skip of its own (SUCCEED or an early return would count as a pass). Call it before any
// check: CTest reports the test Skipped whatever follows.
#pragma once

#include <cstdio>
#include <string>

namespace twinccl_test {

inline constexpr const char* kSkipMarker = "TWINCCL-TEST-SKIPPED:";

// A build under AddressSanitizer or ThreadSanitizer (gcc's macros; clang's __has_feature).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitizerBuild = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitizerBuild = true;
#else
inline constexpr bool kSanitizerBuild = false;
#endif
#else
inline constexpr bool kSanitizerBuild = false;
#endif

inline void skip_test(const std::string& why) {
  std::printf("%s %s\n", kSkipMarker, why.c_str());
  std::fflush(stdout);
}

}  // namespace twinccl_test
