// `twinccl perf --backend nccl`: every row of the sweep in one run (see perf_measure.h).
//
// How it works: run() starts the world once (one NCCL communicator per rank, as nccl-tests keeps
// one for its whole sweep). Each rank walks the rows in order; the first rank thread of a process
// to reach row k plans it (inputs for the reference) and the process's other rank threads (one per
// GPU when a process drives several) reuse that plan; reaching row k+1 drops the process's hold on
// row k, so at most two rows' inputs are alive. Rank 0 writes each row's result. Before the first
// row of each (collective, type, op) every rank warms up as nccl-tests' TimeTest does
// (perf_timing.h): -w out-of-place calls at each size from -b doubling to -e, then one wait.
// Every buffer is a view of one arena per rank, allocated before the first collective for the
// largest row and warmup call (call_layout.h's CallArena; nccl-tests allocates its largest buffers
// once too): with several ranks on one GPU, NCCL's rule, since cudaMalloc/cudaFree mid-sweep
// synchronise the device against the other rank's spinning kernel.
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>

#include "perf_measure.h"
#include "perf_p2p.h"
#include "perf_timing.h"
#include "twinccl/call_layout.h"
#include "twinccl/run.h"

namespace twinccl::cli {
namespace {

// The plans of one process, shared by its rank threads.
class SharedPlans {
 public:
  SharedPlans(const PerfOptions& o, const std::vector<RowSpec>& rows) : o_(o), rows_(rows) {}

  std::shared_ptr<const RowPlan> get(std::size_t row) {
    std::lock_guard lock(mu_);
    if (auto it = plans_.find(row); it != plans_.end()) return it->second;
    plans_.erase(plans_.begin(), plans_.lower_bound(row));  // earlier rows: held by users only
    const RowSpec& r = rows_[row];
    auto plan = std::make_shared<const RowPlan>(plan_row(o_, r.kind, r.dtype, r.op, r.count));
    plans_[row] = plan;
    return plan;
  }

 private:
  const PerfOptions& o_;
  const std::vector<RowSpec>& rows_;
  std::mutex mu_;
  std::map<std::size_t, std::shared_ptr<const RowPlan>> plans_;
};

// nccl-tests' TimeTest warmup for one (collective, type, op): every rank, out of place.
void warm_up_sweep(Communicator& comm, const PerfOptions& o, const RowPlan& plan,
                   const CallArena& arena) {
  if (o.warmup <= 0 || o.iterations <= 0) return;
  const auto me = static_cast<std::size_t>(comm.rank());
  for (std::size_t bytes : warmup_sizes(o)) {
    const std::size_t count = count_for(plan.call.kind, bytes, plan.call.dtype, o.ranks);
    if (count == 0) continue;  // the backend issues nothing for an empty call
    CallSetup s = setup_call(
        comm, {plan.call.kind, plan.call.dtype, plan.ops[me], count, plan.call.root, false},
        &arena);
    Work last;
    for (int i = 0; i < o.warmup; ++i) last = issue_call(comm, s, {.async_op = true});
    last.wait();
  }
}

// The bytes the largest buffers of any row or warmup call of the sweep need.
CallBytes arena_bytes(const PerfOptions& o, const std::vector<RowSpec>& rows) {
  CallBytes most;
  auto add = [&](CallBytes b) {
    most.first = std::max(most.first, b.first);
    most.second = std::max(most.second, b.second);
  };
  const std::vector<std::size_t> warmups = warmup_sizes(o);
  for (const RowSpec& r : rows) {
    if (is_p2p_test(r.kind)) {
      add(p2p_buffer_bytes(r.kind, r.count, r.dtype, o.ranks));
      continue;
    }
    const CallShape shape{r.kind, r.dtype, ReduceOp::sum(), r.count, o.root, false};
    add(call_buffer_bytes(shape, o.ranks));
    for (std::size_t bytes : warmups) {
      CallShape warm = shape;
      warm.count = count_for(r.kind, bytes, r.dtype, o.ranks);
      add(call_buffer_bytes(warm, o.ranks));
    }
  }
  return most;
}

}  // namespace

std::vector<RowResult> measure_rows_in_one_run(const PerfOptions& o,
                                               const std::vector<RowSpec>& rows) {
  std::vector<RowResult> results(rows.size());
  SharedPlans plans(o, rows);
  std::mutex mu;
  const CallBytes bytes = arena_bytes(o, rows);
  run(run_options(o, o.algorithm), [&](Communicator& comm) {
    check_world_size(comm, o.ranks);
    const CallArena arena = allocate_call_arena(comm, bytes);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const std::shared_ptr<const RowPlan> plan = plans.get(i);
      if (!is_p2p_test(plan->call.kind) && starts_sweep(rows, i))
        warm_up_sweep(comm, o, *plan, arena);
      if (comm.rank() == 0) {
        std::lock_guard lock(mu);
        results[i].algorithm = plan->algorithm;
      }
      run_row(comm, o, *plan, results[i], mu, &arena);
      if (comm.rank() == 0 && o.report_timestamps) {
        std::lock_guard lock(mu);
        results[i].finished_at = timestamp_now();
      }
    }
  });
  return results;
}

}  // namespace twinccl::cli
