// The message of the error a call throws, for tests that check what a refusal says:
//
//   CHECK_THAT(twinccl_test::error_text([&] { parse_nccl_tests_output(text, "run.log"); }),
//              Contains("run.log:7: "));
//
// `E` is the error class expected (twinccl::ConfigError by default); a call that throws none
// gives "(no <what> thrown)", so a check for a message fails rather than passes.
#pragma once

#include <string>

#include "twinccl/errors.h"

namespace twinccl_test {

template <class E = twinccl::ConfigError, class Call>
std::string error_text(Call&& call, const char* what = "ConfigError") {
  try {
    call();
  } catch (const E& e) {
    return e.what();
  }
  return std::string("(no ") + what + " thrown)";
}

}  // namespace twinccl_test
