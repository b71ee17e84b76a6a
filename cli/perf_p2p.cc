// sendrecv_perf and hypercube_perf on emulated ranks (or GPUs): see perf_p2p.h for what each
// does and how nccl-tests counts it.
#include "perf_p2p.h"

#include <fmt/format.h>

#include <chrono>
#include <cstring>
#include <mutex>

#include "perf_measure.h"
#include "perf_timing.h"
#include "twinccl/errors.h"
#include "twinccl/reference.h"
#include "twinccl/run.h"

namespace twinccl::cli {

std::string p2p_channels_note(const sim::Tuner& tuner) {
  const sim::P2pChannelPlan plan = sim::p2p_channel_plan(tuner);
  if (!(plan.channel_gbps > 0.0)) {
    return "send/recv: each send at its route's rate (no channel cap modelled for these GPUs)";
  }
  const std::string across =
      tuner.nodes() > 1 ? " (across nodes every peer gets the network peers' few, so the sends "
                          "inside a node too)"
                        : "";
  return fmt::format(
      "send/recv channels (NCCL's rule, docs/perf.md): {} p2p channels, at most {} a send (fewer "
      "for small sends){}: a send inside a node moves at most {} x {:g} GB/s = {:g} GB/s{}",
      plan.p2p_channels, plan.per_peer, across, plan.per_peer, plan.channel_gbps,
      plan.per_peer * plan.channel_gbps,
      tuner.nodes() > 1 ? ", a network send at its NIC's rate" : "");
}
namespace {

constexpr std::size_t kHypercubeAlign = 4;  // elements (nccl-tests' hypercube.cu ALIGN)

// One rank's buffers for one placement: sendrecv sends `send` and receives into `recv`;
// hypercube gathers into `recv` (n blocks of count), its own block from `send` (out of place) or
// already in place.
struct P2pBuffers {
  Buffer send, recv;
};

void run_once(Communicator& comm, OpKind test, const P2pBuffers& b, std::size_t count,
              bool in_place, bool async, Work& last) {
  const int n = comm.size(), me = comm.rank();
  if (test == kSendRecvTest) {
    comm.group_start();
    comm.send(b.send, (me + 1) % n);
    comm.recv(b.recv, (me - 1 + n) % n);
    last = comm.group_end({.async_op = async});
    return;
  }
  if (!in_place) b.recv.slice(static_cast<std::size_t>(me) * count, count).copy_from(b.send);
  for (int mask = 1; mask < n; mask <<= 1) {
    const auto s = static_cast<std::size_t>(me & ~(mask - 1));
    const auto r = s ^ static_cast<std::size_t>(mask);
    const std::size_t elements = count * static_cast<std::size_t>(mask);
    comm.group_start();
    comm.send(b.recv.slice(s * count, elements), me ^ mask);
    comm.recv(b.recv.slice(r * count, elements), me ^ mask);
    last = comm.group_end({.async_op = async && mask * 2 >= n});
  }
}

}  // namespace

std::size_t p2p_count_for(OpKind test, std::size_t bytes, DataType dtype, int nranks) {
  const std::size_t elements = bytes / size_of(dtype);
  if (test == kSendRecvTest) return elements;
  return elements / (kHypercubeAlign * static_cast<std::size_t>(nranks)) * kHypercubeAlign;
}

std::size_t p2p_bytes_for(OpKind test, std::size_t count, DataType dtype, int nranks) {
  return count * size_of(dtype) * (test == kHypercubeTest ? static_cast<std::size_t>(nranks) : 1);
}

double p2p_algbw_bytes(OpKind test, std::size_t count, DataType dtype, int nranks) {
  const double bytes = static_cast<double>(count) * static_cast<double>(size_of(dtype));
  return test == kHypercubeTest ? bytes * (nranks - 1) : bytes;
}

sim::P2pPattern p2p_pattern(OpKind test, std::size_t count, DataType dtype, int nranks) {
  const double bytes = static_cast<double>(count) * static_cast<double>(size_of(dtype));
  return test == kSendRecvTest ? sim::sendrecv_pattern(nranks, bytes)
                               : sim::hypercube_pattern(nranks, bytes);
}

void check_p2p_ranks(OpKind test, int nranks) {
  if (test == kHypercubeTest && (nranks < 1 || (nranks & (nranks - 1)) != 0)) {
    throw InvalidArgument("hypercube: " + std::to_string(nranks) +
                          " ranks is not a power of 2 (nccl-tests' "
                          "hypercube_perf skips such a run); use -g/--ranks 1, 2, 4, 8, ...");
  }
}

RowPlan plan_p2p_row(const PerfOptions& o, OpKind test, DataType dtype, std::size_t count) {
  const int n = o.ranks;
  check_p2p_ranks(test, n);
  RowPlan p;
  p.call.kind = test;
  p.call.dtype = dtype;
  p.call.count = count;
  const double element_bytes = static_cast<double>(size_of(dtype));
  const double recv_elements =
      static_cast<double>(count) * (test == kHypercubeTest ? static_cast<double>(n) : 1.0);
  p.check =
      check_fits_in_host(o, (static_cast<double>(count) * n + 2 * recv_elements) * element_bytes,
                         fmt::format("{} {} count {}", perf_test_name(test), name(dtype), count));
  for (int r = 0; r < n; ++r)
    p.inputs.push_back(p.check ? make_input(dtype, ReduceKind::sum, r, count, 7) : Bytes{});
  return p;
}

namespace {
// What a rank receives: sendrecv one peer's count, hypercube every rank's.
std::size_t recv_count_of(OpKind test, std::size_t count, int nranks) {
  return test == kHypercubeTest ? count * static_cast<std::size_t>(nranks) : count;
}
}  // namespace

CallBytes p2p_buffer_bytes(OpKind test, std::size_t count, DataType dtype, int nranks) {
  return {count * size_of(dtype), recv_count_of(test, count, nranks) * size_of(dtype)};
}

void run_p2p_row(Communicator& comm, const PerfOptions& o, const RowPlan& p, RowResult& result,
                 std::mutex& mu, const CallArena* arena) {
  const int n = o.ranks;
  const OpKind test = p.call.kind;
  const DataType dtype = p.call.dtype;
  const std::size_t count = p.call.count;
  const auto me = static_cast<std::size_t>(comm.rank());
  const std::size_t recv_count = recv_count_of(test, count, n);
  for (int place = 0; place < 2; ++place) {
    // sendrecv in place would send and receive one buffer at once: nccl-tests times it
    // unchecked; here it runs out of place (same traffic) and is reported N/A.
    const bool in_place = place == 1 && test == kHypercubeTest;
    P2pBuffers b = arena != nullptr
                       ? P2pBuffers{view_in(arena->first, count, dtype),
                                    view_in(arena->second, recv_count, dtype)}
                       : P2pBuffers{comm.alloc(count, dtype), comm.alloc(recv_count, dtype)};
    if (in_place) b.send = b.recv.slice(me * count, count);
    double us = 0;
    Work last;
    if (o.iterations > 0) {
      // nccl-tests warms up once per sweep (perf_timing.h); a p2p row warms up here, per row.
      for (int i = 0; i < o.warmup; ++i) run_once(comm, test, b, count, in_place, true, last);
      last.wait();
      const NcclTestsTime t = time_like_nccl_tests(
          comm, o, fmt::format("{} count {}", perf_test_name(test), count),
          [&] {
            run_once(comm, test, b, count, in_place, true, last);
            return last;
          },
          test != kHypercubeTest,  // its steps wait for each other: no -m group around them
          arena);
      us = o.report_cputime ? t.cputime_us : t.time_us;
    }
    long long wrong = 0;
    const bool checked = p.check && !(test == kSendRecvTest && place == 1);
    for (int c = 0; checked && c < std::max(o.check_count, 1) && wrong == 0; ++c) {
      if (count > 0) b.send.copy_from_host(p.inputs[me].data(), p.inputs[me].size());
      run_once(comm, test, b, count, in_place, false, last);
      std::vector<unsigned char> got(b.recv.bytes());
      b.recv.copy_to_host(got.data(), got.size());
      const std::size_t e = size_of(dtype);
      for (std::size_t i = 0; i < recv_count; ++i) {
        const std::size_t from =
            test == kSendRecvTest ? (me + static_cast<std::size_t>(n) - 1) % n : i / count;
        const std::size_t at = test == kSendRecvTest ? i : i % count;
        if (std::memcmp(got.data() + i * e, p.inputs[from].data() + at * e, e) != 0) ++wrong;
      }
      wrong = reduce_over_ranks(comm, wrong, DataType::int64, ReduceOp::sum(), arena);
    }
    if (comm.rank() == 0) {
      std::lock_guard<std::mutex> lock(mu);
      result.time_us[place] = us;
      result.wrong[place] = wrong;
      if (!checked) result.unchecked[place] = true;
    }
  }
}

}  // namespace twinccl::cli
