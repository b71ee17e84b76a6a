#include "emu_memory.h"

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>

#include "flag_values.h"
#include "twinccl/errors.h"

namespace twinccl::cli {

double emulator_bytes_needed(OpKind kind, DataType dtype, std::size_t count, int root, int nranks) {
  OpDesc call;
  call.kind = kind;
  call.dtype = dtype;
  call.count = count;
  call.root = std::clamp(root, 0, nranks - 1);
  double most = 0;  // the root of a rooted collective holds more than the others: count every rank
                    // as the larger
  for (int rank : {call.root, (call.root + 1) % nranks}) {
    double send = static_cast<double>(send_elements(call, rank, nranks));
    double recv = static_cast<double>(recv_elements(call, rank, nranks));
    most = std::max(most, (2 * send + 5 * recv) * static_cast<double>(size_of(dtype)));
  }
  return most * nranks;
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
                           int root, int nranks, std::string_view advice) {
  double need = emulator_bytes_needed(kind, dtype, count, root, nranks);
  std::string why;
  double limit = emulator_memory_limit_bytes(&why);
  if (need <= limit) return;
  throw InvalidArgument(fmt::format(
      "the emulator cannot run {} {} at {} on {} ranks: it needs about {} of memory "
      "(every rank's send, receive and check buffers), more than the limit of {}, {}; {}",
      name(kind), name(dtype), describe_bytes(static_cast<double>(bytes)), nranks,
      describe_bytes(need), describe_bytes(limit), why, advice));
}

}  // namespace twinccl::cli
