// One row of `twinccl perf --backend sim` (perf_predict_row.h): its request, its prediction and
// whether the emulator checks it.
#include "perf_predict_row.h"

#include <algorithm>

#include "emu_memory.h"
#include "perf_measure.h"
#include "perf_p2p.h"
#include "twinccl/sim/nccl_tests_log.h"
#include "twinccl/sim/selection.h"
#include "twinccl/sim/timing.h"
#include "twinccl/sim/tuner.h"

namespace twinccl::cli {
namespace {
constexpr int kMaxCheckedRanks = 64;

// nccl-tests' host side (sim::Request::gpus_per_thread): with -g/-t given, the GPUs one thread
// launches (-g, default 1 as nccl-tests'); with --ranks only, the kernels alone.
int gpus_per_thread(const PerfOptions& o) {
  return o.ngpus > 0 || o.nthreads > 0 ? std::max(1, o.ngpus) : 0;
}

}  // namespace

sim::Request make_request(const PerfOptions& o, OpKind kind, DataType dtype, std::size_t count,
                          ReduceKind op, bool in_place) {
  sim::Request r;
  r.op = op;  // op and in place change only a one-rank call (sim::Prediction::one_rank)
  r.in_place = in_place;
  r.spec.kind = kind;
  r.spec.count = count;
  r.spec.root = o.root;
  r.spec.nranks = o.ranks;  // 0: every GPU of the topology; N: its first N (-g / --ranks)
  r.dtype = dtype;
  r.algorithm = o.algorithm;
  if (!o.protocol.empty()) r.protocol = sim::parse_protocol(o.protocol);
  restrict_request(r, o.nccl_lists);  // --algo / --proto in NCCL's syntax
  r.fidelity = sim::parse_fidelity(o.fidelity);
  r.gpus_per_thread = gpus_per_thread(o);
  r.nccl_version = sim::nccl_version_code(o.nccl_version);  // "" -> 0, the newest model
  return r;
}

sim::Prediction predict_row(const PerfOptions& o, OpKind kind, DataType dtype, std::size_t count,
                            ReduceKind op, bool in_place) {
  const sim::Tuner& tuner = o.selection->tuner(o.ranks);  // once per sweep, as NCCL tunes
  if (!is_p2p_test(kind)) {
    const sim::Request r = make_request(o, kind, dtype, count, op, in_place);
    return predicted_under(o.nccl_lists, [&] { return sim::predict(tuner, r); });
  }
  const sim::P2pPrediction priced =
      sim::predict_p2p(tuner, p2p_pattern(kind, count, dtype, o.ranks),
                       sim::parse_fidelity(o.fidelity), gpus_per_thread(o));
  sim::Prediction p;
  p.algorithm = "p2p";
  p.protocol = sim::Protocol::simple;
  p.nranks = o.ranks;
  p.fidelity = priced.fidelity;
  p.model = priced.model;
  p.time_us = priced.time_us;
  return p;
}

bool checkable(const PerfOptions& o, OpKind kind, std::size_t count, DataType dtype, int nranks) {
  if (is_p2p_test(kind)) {  // send + receive buffers of every rank
    const double per_rank = static_cast<double>(count) * (kind == kHypercubeTest ? nranks + 1 : 2);
    return nranks <= kMaxCheckedRanks &&
           per_rank * size_of(dtype) * nranks <= static_cast<double>(o.check_max_bytes);
  }
  OpDesc call;
  call.kind = kind;
  call.count = count;
  call.dtype = dtype;
  call.root = o.root;
  double per_rank =
      static_cast<double>(send_elements(call, 0, nranks) + recv_elements(call, 0, nranks));
  if (nranks > kMaxCheckedRanks ||
      per_rank * size_of(dtype) * nranks > static_cast<double>(o.check_max_bytes)) {
    return false;
  }
  check_emulator_memory(kind, dtype, bytes_for(kind, count, dtype, nranks), count, o.root, nranks,
                        true, "lower --check-max (or -e), or skip the check with -c 0");
  return true;
}

}  // namespace twinccl::cli
