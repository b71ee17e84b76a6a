// What every fuzz target accepts: the input is parsed or rejected with a typed twinccl::Error
// whose message is bounded. Anything else (a raw library exception, a crash, a message that
// echoes megabytes of input) is a finding: the target aborts so the driver records the input.
//
//   extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
//     return twinccl::fuzz::expect_typed_errors([&] { parse(std::string_view(...)); });
//   }
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string_view>

#include "twinccl/errors.h"

namespace twinccl::fuzz {

// Longest error message a person can still read; a longer one echoes input it should summarise.
inline constexpr std::size_t max_message_bytes = 4096;

inline std::string_view as_text(const uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

template <class Body>
int expect_typed_errors(Body&& body) {
  try {
    body();
  } catch (const twinccl::Error& e) {
    std::string_view what = e.what();
    if (what.size() > max_message_bytes) {
      std::fprintf(stderr, "fuzz: error message of %zu bytes (cap %zu): %.300s...\n", what.size(),
                   max_message_bytes, e.what());
      std::abort();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz: untyped exception escaped: %.1000s\n", e.what());
    std::abort();
  } catch (...) {
    std::fprintf(stderr, "fuzz: unknown exception escaped\n");
    std::abort();
  }
  return 0;
}

}  // namespace twinccl::fuzz
