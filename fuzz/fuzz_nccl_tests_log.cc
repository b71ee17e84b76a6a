// Fuzz target: nccl-tests results (stdout logs and -J JSON,
// sim/include/twinccl/sim/nccl_tests_log.h). Seeds: fuzz/corpus/nccl_tests_log/ (published logs
// from tests/fidelity/logs and a -J sample). Every input parses or is refused with a bounded
// twinccl::ConfigError.
#include <cmath>
#include <cstdlib>

#include "fuzz_support.h"
#include "twinccl/sim/nccl_tests_log.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return twinccl::fuzz::expect_typed_errors([&] {
    const std::string_view text = twinccl::fuzz::as_text(data, size);
    for (const auto& table : twinccl::sim::parse_nccl_tests_file_text(text, "fuzz.log")) {
      for (const auto& row : table.rows) {
        for (const auto& block : {row.out_of_place, row.in_place}) {
          // What the parser promises: finite, non-negative numbers.
          if (block && !(std::isfinite(block->time_us) && block->time_us >= 0 &&
                         std::isfinite(block->busbw_gbps))) {
            std::abort();
          }
        }
      }
    }
  });
}
