// The Communicator on NCCL: one ncclComm_t, one GPU, one CUDA stream.
//
//   ncclUniqueId id = ...;  // from rank 0, through the bootstrap store
//   auto world = NcclCommunicator::create({.id = id, .nranks = 8, .rank = r, .device = 0});
//   world->all_reduce(x, x, ReduceOp::sum());
//
// Calls are enqueued on the communicator's stream, ordered after the caller's stream and this
// thread's previous NCCL launch (ordering.h), and return a Work on a CUDA event (work.h).
// group_start/group_end are ncclGroupStart/End (one group per thread: another communicator is
// refused while it is open); split is ncclCommSplit, after the ranks of each color agreed on the
// name (split_names.h); subcommunicator is ncclCommInitRankConfig among the members, with
// an id sent over the parent (subcommunicator.cc). Uneven (_v) variants and, before NCCL 2.28.3,
// all_to_all/gather/scatter are grouped ncclSend/ncclRecv (collectives.cc, uneven.cc). premul_sum
// uses ncclRedOpCreatePreMulSum, destroyed once the call is issued. The communicator is
// non-blocking (config.blocking = 0): init, split, every launch and finalize are polled with
// ncclCommGetAsyncError until done, with the timeout and the run's abort signal as bounds.
#pragma once

#include <nccl.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nccl/context.h"
#include "nccl/graph.h"
#include "nccl/rank_scratch.h"
#include "nccl/work.h"
#include "twinccl/call_graphs.h"
#include "twinccl/communicator.h"

namespace twinccl::nccl {

struct CommunicatorOptions {
  ncclUniqueId id{};
  int nranks = 1;
  int rank = 0;
  int device = 0;
  std::string name = "world";
  std::chrono::nanoseconds timeout = std::chrono::seconds(300);
  std::shared_ptr<AbortSignal> signal;  // shared by the ranks of one run; may be null
};

// Non-blocking (init, split and finalize polled in CommContext::wait_ready), named `name`, which
// must outlive the communicator's readiness: callers pass CommContext::name().
ncclConfig_t make_config(const std::string& name);

class NcclCommunicator final : public Communicator, public CallGraphs {
 public:
  // ncclCommInitRankConfig on options.device, non-blocking, polled until every rank joined
  // (TimeoutError past options.timeout, AbortedError when options.signal is raised).
  static std::unique_ptr<NcclCommunicator> create(const CommunicatorOptions& options);
  // `scratch`: the rank's (rank_scratch.h), made before its first communicator's init and shared
  // by every communicator split or made from it.
  NcclCommunicator(std::shared_ptr<CommContext> ctx, std::shared_ptr<RankScratch> scratch);
  // Waits (bounded by the timeout) for the stream, then lets the context finalize the comm;
  // aborts it instead when the stream does not drain or an error is pending. Destroyed while an
  // exception unwinds (the rank failed), it raises the run's abort signal first, then aborts.
  ~NcclCommunicator() override;

  int rank() const override { return ctx_->rank(); }
  int size() const override { return ctx_->size(); }
  const std::string& name() const override { return ctx_->name(); }
  std::string_view backend() const override { return "nccl"; }
  void set_caller_stream(void* stream) override {
    caller_stream_ = static_cast<cudaStream_t>(stream);
  }

  // CUDA graphs of this communicator's calls (twinccl/call_graphs.h, graph.h).
  // No cudaMalloc follows (refused inside a capture): barrier's element is the rank scratch's.
  void begin_capture(Where where = Where::current()) override { graph_.begin(where); }
  void end_capture(Where where = Where::current()) override { graph_.end(where); }
  Work launch_capture(Where where = Where::current()) override {
    return graph_.launch(caller_stream_, where);
  }
  void drop_capture() noexcept override { graph_.drop(); }

  // For benchmarks and interop: the raw handles (owned by this communicator).
  ncclComm_t native_comm() const { return ctx_->comm(); }
  cudaStream_t native_stream() const { return ctx_->cuda_stream(); }
  int device() const { return ctx_->device(); }

 protected:
  Work submit(OpDesc op) override;
  Buffer do_alloc(std::size_t count, DataType dtype, std::size_t bytes) override;
  void do_group_start(Where where) override;
  Work do_group_end(const CallOptions& opts, Where where) override;
  std::unique_ptr<Communicator> do_split(int color, int key, std::string new_name,
                                         Where where) override;
  // subcommunicator.cc: the id travels from the first member over the parent (p2p).
  std::unique_ptr<Communicator> do_subcommunicator(std::vector<int> ranks, int new_rank,
                                                   std::string new_name, Where where) override;

 private:
  // A new communicator (a split's or a subcommunicator's) on `stream`, ready: the stream's abort
  // reaches it, and it orders its calls after this one's caller stream.
  std::unique_ptr<Communicator> adopt(std::shared_ptr<StreamContext> stream,
                                      std::shared_ptr<CommContext> ctx) const;
  void release_reduce_ops();

  std::shared_ptr<CommContext> ctx_;
  std::uint64_t op_count_ = 0;
  int group_depth_ = 0;
  std::shared_ptr<Completion> group_completion_;  // shared by the ops of the open group
  std::vector<ncclRedOp_t> reduce_ops_;           // premul_sum ops to destroy once issued
  std::shared_ptr<RankScratch> scratch_;
  void* barrier_element_;  // 4 device bytes for barrier's one-element all_reduce (in scratch_)
  cudaStream_t caller_stream_ = nullptr;  // legacy default stream unless set_caller_stream
  GraphCapture graph_{ctx_};              // after ctx_: freed before the comm is finalized
};

}  // namespace twinccl::nccl
