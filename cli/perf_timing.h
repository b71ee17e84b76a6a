// How `twinccl perf --backend emu|nccl` times a row: nccl-tests 2.19's rules (src/common.cu,
// BenchTime, startColl, completeColl, TimeTest), so the time column compares with nccl-tests'.
//
//   NcclTestsTime t = time_like_nccl_tests(comm, options, "all_reduce float count 256",
//                                          [&] { return issue_call(comm, s, {.async_op = true});
//                                          });
//   double us = options.report_cputime ? t.cputime_us : t.time_us;  // t.time_us: over ranks (-a)
//
// See docs/nccl-backend.md ("How perf times a row") for the rules and where nccl-tests has them.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "perf_options.h"
#include "twinccl/call_layout.h"
#include "twinccl/communicator.h"

namespace twinccl::cli {

// At most this many timed calls wait unfinished without -z: a CUDA stream's launch queue is bounded
// too (the host blocks in the launch), and the emulator holds every pending call (-n 1000000 of 8
// ranks took ~7 GB and died of std::bad_alloc). nccl-tests never waits inside the loop: the same
// below 1024 calls per row (-n x -m).
inline constexpr int kTimedCallsInFlight = 1024;

struct NcclTestsTime {
  double time_us = 0;     // per call, combined over the ranks as -a says (nccl-tests' deltaSec)
  double cputime_us = 0;  // this rank's host time per call before the final wait (-C 1)
};

// One row's timing as nccl-tests' BenchTime does it: one untimed call and its wait, a barrier,
// then a host timer (steady clock) around -n iterations of -m calls each (one group when -m > 1;
// with -G captured into a CUDA graph, instantiated, then the timer restarted around -G launches),
// issued back to back; -z 1/2 wait for each call (1: and a barrier after it), -z 3 waits and
// barriers after each iteration and times only the issue-to-finish part; then the last call is
// waited for and the time divided by n*m (and by -G); -a combines it over the ranks (0 rank 0, 1
// mean, 2 min, 3 max). `issue` issues one call asynchronously. Every rank calls it; `row` names the
// row in the progress note rank 0 prints after 10 s. `group_calls` false: the -m calls are issued
// one after the other, ungrouped (a call that waits inside itself, as the hypercube test's steps
// do).
// `arena`: where -a's combining all_reduce takes its 8 bytes (else allocated per call).
NcclTestsTime time_like_nccl_tests(Communicator& comm, const PerfOptions& options,
                                   const std::string& row, const std::function<Work()>& issue,
                                   bool group_calls = true, const CallArena* arena = nullptr);

// One call, waited for: the -c check's call. With -G it is captured into a CUDA graph and the
// graph launched once, as nccl-tests' BenchTime checks under -G. `issue` issues asynchronously.
void issue_once_like_nccl_tests(Communicator& comm, const PerfOptions& options,
                                const std::function<Work()>& issue);

// One host value reduced over the ranks through the communicator's own memory (GPU-safe): -a's
// time, the -c check's #wrong. In `arena`'s scalar when given, else in memory allocated for it.
template <class T>
T reduce_over_ranks(Communicator& comm, T value, DataType dtype, ReduceOp op,
                    const CallArena* arena = nullptr) {
  static_assert(sizeof(T) == 8);
  Buffer b = arena != nullptr ? view_in(arena->scalar, 1, dtype) : comm.alloc(1, dtype);
  b.copy_from_host(&value, sizeof(T));
  comm.all_reduce(b, b, op);
  b.copy_to_host(&value, sizeof(T));
  return value;
}

// nccl-tests' warmup (TimeTest): before a (collective, type, op) sweep, -w out-of-place calls at
// each size from -b doubling up to -e, then one wait; returns the sizes warmed, in bytes.
std::vector<std::size_t> warmup_sizes(const PerfOptions& options);

}  // namespace twinccl::cli
