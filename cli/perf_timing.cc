// nccl-tests 2.19's timing rules for measured perf rows (see perf_timing.h).
//
// How it works, following src/common.cu of NVIDIA/nccl-tests 2.19.6 function by function:
// * BenchTime opens with one startColl and completeColl (untimed) and a Barrier: here one call,
//   its wait and comm.barrier().
// * The timed loop: `timer tim` (a steady clock) starts, each of -n iterations issues -m calls
//   (ncclGroupStart/End around them when -m > 1: group_start/group_end here); startColl waits for
//   its call when -z is set (testStreamSynchronize: polls the stream) and, for -z 1, joins a
//   Barrier; -z 3 waits and barriers after each iteration instead and adds only the time from the
//   iteration's start to its wait (collOnlySec).
// * cputime is read before completeColl; completeColl waits for the stream (skipped for -z with
//   -m 1, where every call was already waited for); the time is then read again and divided by
//   n*m (deltaSec). Allreduce(deltaSec, average) combines it over threads and processes.
// * -G N (CUDA graphs): the capture begins after that barrier (cudaStreamBeginCapture), the -n
//   iterations are issued into it, the capture ends and is instantiated, then a barrier, the timer
//   restarts and the graph is launched N times; the time is divided by N as well (not cputime).
//   The -c check call is captured and launched once too (issue_once_like_nccl_tests).
// Differences, on purpose or not yet done (docs/nccl-backend.md): the barrier is a collective on
// the communicator (nccl-tests: a host thread barrier plus MPI_Barrier); inside a -m group the -z
// waits and barriers are skipped (nccl-tests' stream wait there finds nothing launched yet); the
// buffers are not shifted per iteration through a -e sized allocation.
#include "perf_timing.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>

#include "twinccl/call_graphs.h"
#include "twinccl/errors.h"

namespace twinccl::cli {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_between(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

// nccl-tests' Allreduce(args, &deltaSec, average) over the ranks, through the communicator.
double combine_over_ranks(Communicator& comm, double value, int average, const CallArena* arena) {
  const double v =
      reduce_over_ranks(comm, average == 0 && comm.rank() != 0 ? 0.0 : value, DataType::float64,
                        average == 2   ? ReduceOp::min()
                        : average == 3 ? ReduceOp::max()
                                       : ReduceOp::sum(),
                        arena);
  return average == 1 ? v / comm.size() : v;
}

// -G: the communicator's CUDA graphs (null without -G). The flags refused -G off NCCL already;
// this names what cannot be captured.
CallGraphs* graphs_for(Communicator& comm, const PerfOptions& o, const std::string& row,
                       bool group_calls) {
  if (o.graph <= 0) return nullptr;
  CallGraphs* graphs = call_graphs(comm);
  if (graphs == nullptr) {
    throw InvalidArgument(
        fmt::format("-G {}: the {} backend has no CUDA graphs", o.graph, comm.backend()));
  }
  if (!group_calls) {
    throw InvalidArgument(fmt::format(
        "-G {}: {}: this test waits between its steps inside each call, which a CUDA graph "
        "capture cannot hold (drop -G for it)",
        o.graph, row));
  }
  return graphs;
}

// Frees the row's graph however the row ends.
struct DropCapture {
  CallGraphs* graphs;
  ~DropCapture() {
    if (graphs != nullptr) graphs->drop_capture();
  }
};

}  // namespace

NcclTestsTime time_like_nccl_tests(Communicator& comm, const PerfOptions& o, const std::string& row,
                                   const std::function<Work()>& issue, bool group_calls,
                                   const CallArena* arena) {
  NcclTestsTime result;
  if (o.iterations <= 0) return result;
  const int agg = std::max(o.agg_iters, 1);
  const bool grouped = agg > 1 && group_calls;
  const int blocking = o.blocking;
  CallGraphs* graphs = graphs_for(comm, o, row, group_calls);
  DropCapture drop{graphs};
  issue().wait();  // BenchTime's untimed startColl + completeColl
  comm.barrier();
  if (graphs != nullptr) graphs->begin_capture();
  Clock::time_point t0 = Clock::now();
  Clock::time_point noted = t0;
  double coll_only_s = 0;
  long long since_wait = 0;
  Work last;
  for (int iter = 0; iter < o.iterations; ++iter) {
    const Clock::time_point iter_start = Clock::now();
    if (grouped) comm.group_start();
    for (int a = 0; a < agg; ++a) {
      last = issue();
      if (grouped || blocking == 0) continue;
      last.wait();                        // startColl: blocking_coll waits for the call
      if (blocking == 1) comm.barrier();  // and -z 1 joins a barrier
    }
    if (grouped) last = comm.group_end({.async_op = true});
    since_wait += agg;
    if (blocking == 3) {
      last.wait();
      coll_only_s += seconds_between(iter_start, Clock::now());
      comm.barrier();
    } else if (blocking == 0 && graphs == nullptr && since_wait >= kTimedCallsInFlight &&
               iter + 1 < o.iterations) {
      last.wait();  // bounded in-flight calls (perf_timing.h); nccl-tests has no such wait
      since_wait = 0;
    }
    if (comm.rank() == 0 && Clock::now() - noted >= std::chrono::seconds(10)) {
      noted = Clock::now();
      std::cerr << fmt::format("twinccl perf: {}: {} of {} timed iterations after {:.0f} s\n", row,
                               iter + 1, o.iterations, seconds_between(t0, noted));
    }
  }
  if (graphs != nullptr) {  // -G: end and instantiate, barrier, restart the timer, N launches
    graphs->end_capture();
    comm.barrier();
    t0 = Clock::now();
    for (int l = 0; l < o.graph; ++l) last = graphs->launch_capture();
  }
  const double calls = static_cast<double>(o.iterations) * agg;
  const double cpu_s = blocking == 3 ? coll_only_s : seconds_between(t0, Clock::now());
  if (!(blocking != 0 && agg <= 1)) last.wait();  // completeColl
  double delta_s = blocking == 3 ? coll_only_s : seconds_between(t0, Clock::now());
  if (graphs != nullptr) delta_s /= o.graph;
  result.cputime_us = cpu_s / calls * 1e6;
  result.time_us = combine_over_ranks(comm, delta_s / calls * 1e6, o.average, arena);
  return result;
}

std::vector<std::size_t> warmup_sizes(const PerfOptions& o) {
  std::vector<std::size_t> sizes;
  for (std::size_t bytes = std::max<std::size_t>(o.min_bytes, 1); bytes <= o.max_bytes;
       bytes *= 2) {
    sizes.push_back(bytes);
    if (bytes > o.max_bytes / 2) break;  // no overflow at -e near the top of size_t
  }
  return sizes;
}

void issue_once_like_nccl_tests(Communicator& comm, const PerfOptions& o,
                                const std::function<Work()>& issue) {
  CallGraphs* graphs = o.graph > 0 ? call_graphs(comm) : nullptr;
  if (graphs == nullptr) return issue().wait();
  DropCapture drop{graphs};
  graphs->begin_capture();
  issue();  // captured: its Work runs with the launch
  graphs->end_capture();
  graphs->launch_capture().wait();
}

}  // namespace twinccl::cli
