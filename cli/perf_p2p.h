// nccl-tests' sendrecv_perf and hypercube_perf in `twinccl perf`: rounds of grouped send/recv,
// not one collective call. A row carries them under the point-to-point kinds: OpKind::send for
// sendrecv, OpKind::recv for hypercube (kSendRecvTest, kHypercubeTest), so the table, -J and the
// sweep treat them like the collectives while counting, checking and pricing them as nccl-tests'
// sources say (src/sendrecv.cu, src/hypercube.cu, nccl-tests 2.19):
//   sendrecv   rank r sends count elements to r+1 and receives count from r-1; size = count x
//              type size; algbw = size / time; busbw = algbw. In-place is timed, not checked (N/A).
//   hypercube  an all-gather in log2(n) rounds: for mask 1, 2, 4 ..., rank r exchanges mask x
//              count elements with r ^ mask; count = per-rank elements rounded down to 4 (ALIGN 4),
//              size = n x count x type size; algbw = count x type size x (n-1) / time; busbw =
//              algbw. Needs a power-of-two rank count.
#pragma once

#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>

#include "perf_measure.h"
#include "perf_options.h"
#include "twinccl/data_type.h"
#include "twinccl/operation.h"
#include "twinccl/sim/p2p.h"

namespace twinccl::cli {

inline constexpr OpKind kSendRecvTest = OpKind::send;
inline constexpr OpKind kHypercubeTest = OpKind::recv;

inline bool is_p2p_test(OpKind k) { return k == kSendRecvTest || k == kHypercubeTest; }
// The test's name in twinccl's own outputs (--format csv/json): "sendrecv", "hypercube", or the
// collective's.
inline std::string_view perf_test_name(OpKind k) {
  return k == kSendRecvTest ? "sendrecv" : k == kHypercubeTest ? "hypercube" : name(k);
}
// Whether the sweep repeats per -o op: the reductions, and sendrecv (nccl-tests loops its ops and
// prints their names, though nothing is reduced).
inline bool sweeps_ops(OpKind k) { return is_reducing(k) || k == kSendRecvTest; }

// The header line a predicted sendrecv / hypercube sweep prints: NCCL's p2p channels on the
// communicator and what a send inside a node moves at most (sim::p2p_channel_plan).
std::string p2p_channels_note(const sim::Tuner& tuner);

std::size_t p2p_count_for(OpKind test, std::size_t bytes, DataType dtype, int nranks);
std::size_t p2p_bytes_for(OpKind test, std::size_t count, DataType dtype, int nranks);
// nccl-tests' algbw numerator in bytes (busbw factor 1 for both).
double p2p_algbw_bytes(OpKind test, std::size_t count, DataType dtype, int nranks);
// The rounds the simulator prices (sim/p2p.h).
sim::P2pPattern p2p_pattern(OpKind test, std::size_t count, DataType dtype, int nranks);
// Throws InvalidArgument for hypercube on a rank count that is not a power of two.
void check_p2p_ranks(OpKind test, int nranks);

// plan_row and run_row for the two tests: warmup and timed iterations of -m calls, then -c
// checked calls against what every rank should hold (sendrecv's in-place: not checked, as
// nccl-tests).
RowPlan plan_p2p_row(const PerfOptions& options, OpKind test, DataType dtype, std::size_t count);
void run_p2p_row(Communicator& comm, const PerfOptions& options, const RowPlan& plan,
                 RowResult& result, std::mutex& mu, const CallArena* arena = nullptr);
// The bytes a p2p row's send (first) and receive (second) buffers need.
CallBytes p2p_buffer_bytes(OpKind test, std::size_t count, DataType dtype, int nranks);

}  // namespace twinccl::cli
