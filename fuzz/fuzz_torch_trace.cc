// Fuzz target: PyTorch profiler traces (Kineto JSON) imported as a job (trace/torch_import.h),
// as `twinccl import-torch-trace` does after reading the files. The input is one file, or several
// separated by a line "--8<--" (one per rank). Accepted: a Trace that the replay's own checks
// (sim::check_trace) accept or refuse with a typed error; refused: a typed twinccl::Error with a
// bounded message. A crash, a hang or an untyped exception is a finding.
//
//   fuzz_torch_trace --seconds 8 fuzz/corpus/torch_trace
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "twinccl/sim/replay_trace.h"
#include "twinccl/trace/torch_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return twinccl::fuzz::expect_typed_errors([&] {
    const std::string_view text = twinccl::fuzz::as_text(data, size);
    std::vector<twinccl::trace::TorchTraceText> files;
    std::size_t from = 0;
    for (;;) {
      const std::size_t cut = text.find("\n--8<--\n", from);
      files.push_back({"rank" + std::to_string(files.size()) + ".json",
                       std::string(text.substr(from, cut == text.npos ? text.npos : cut - from))});
      if (cut == text.npos || files.size() >= 64) break;
      from = cut + 8;
    }
    const twinccl::trace::TorchImport job = twinccl::trace::import_torch_traces(files);
    twinccl::sim::check_trace(job.trace, "imported");
  });
}
