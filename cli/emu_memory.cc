#include "emu_memory.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

#include "flag_values.h"
#include "twinccl/errors.h"

namespace twinccl::cli {

// How it works: per rank, buffers of its send size S and receive size R (elements x dtype):
//   perf's measure_row holds S + R (the call's buffers; in place only max(S, R)), and with the
//   check S more (the rank's input, kept for the reference model) and 3 R (before, expected,
//   result); an algorithm's staging adds up to about one max(S, R).
// Fitted to the peak RSS (/usr/bin/time -v) of `twinccl perf KIND --backend emu --ranks 8 -b 8M
// -e 8M -n 1 -w 0 -c 1|0` minus the 35 MB of an 8-byte run, every collective and algorithm
// (2026-11, the 2-core machine): checked 6.1 B per rank for all_reduce (B = 8 MiB), 4 R + 2 S for
// all_gather, reduce_scatter, broadcast, reduce, gather; unchecked S + R, and up to 1.04 max(S, R)
// more for the reductions' staging algorithms (reduce_scatter halving_doubling, direct; reduce
// direct; all_reduce nvls), under 0.03 for the other collectives' algorithms.
struct BufferFactors {
  double send;
  double recv;
};
constexpr BufferFactors kChecked{2, 4};    // call's buffers + input + before/expected/result
constexpr BufferFactors kUnchecked{1, 1};  // the call's buffers
// Staging, in max(S, R): reductions measured up to 1.04 (half again as margin); the others
// measured under 0.03 (a quarter as margin for what the process itself grows by).
constexpr double kStagingOfLarger = 1.5;
constexpr double kMarginOfLarger = 0.25;

double emulator_bytes_needed(OpKind kind, DataType dtype, std::size_t count, int root, int nranks,
                             bool check) {
  OpDesc call;
  call.kind = kind;
  call.dtype = dtype;
  call.count = count;
  call.root = std::clamp(root, 0, nranks - 1);
  const BufferFactors f = check ? kChecked : kUnchecked;
  const double staging = is_reducing(kind) ? kStagingOfLarger : kMarginOfLarger;
  double elements = 0;
  for (int rank = 0; rank < nranks; ++rank) {
    const auto send = static_cast<double>(send_elements(call, rank, nranks));
    const auto recv = static_cast<double>(recv_elements(call, rank, nranks));
    elements += f.send * send + f.recv * recv + staging * std::max(send, recv);
  }
  return elements * static_cast<double>(size_of(dtype));
}

double emulator_memory_limit_bytes(std::string* why) {
  double physical =
      static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  double limit = physical / 2;
  if (why) *why = "half this machine's physical memory";
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY &&
      static_cast<double>(as.rlim_cur) / 2 < limit) {
    limit = static_cast<double>(as.rlim_cur) / 2;
    if (why) *why = "half the address-space limit (ulimit -v)";
  }
  return limit;
}

void check_emulator_memory(OpKind kind, DataType dtype, std::size_t bytes, std::size_t count,
                           int root, int nranks, bool check, std::string_view advice) {
  double need = emulator_bytes_needed(kind, dtype, count, root, nranks, check);
  std::string why;
  double limit = emulator_memory_limit_bytes(&why);
  if (need <= limit) return;
  throw InvalidArgument(fmt::format(
      "the emulator cannot run {} {} at {} on {} ranks: it needs about {} of memory "
      "(every rank's send, receive{} buffers), more than the limit of {}, {}; {}",
      name(kind), name(dtype), describe_bytes(static_cast<double>(bytes)), nranks,
      describe_bytes(need), check ? " and check" : "", describe_bytes(limit), why, advice));
}

}  // namespace twinccl::cli
