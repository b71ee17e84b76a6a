// NcclCommunicator: lifecycle, submit, groups, split (see communicator.h).
//
// How it works: submit() checks the communicator is alive, makes the GPU current, enqueues the
// op's NCCL calls on the communicator's stream and records a CUDA event behind them. Inside a
// group (group_depth_ > 0) the ops share one Completion recorded at the outermost group_end,
// because NCCL only launches a group's work at ncclGroupEnd. premul_sum reduce ops are destroyed
// once the call that uses them has been issued (after the outermost group_end inside a group).
#include "nccl/communicator.h"

#include <limits>
#include <thread>

#include "nccl/check.h"
#include "nccl/collectives.h"
#include "nccl/memory.h"
#include "nccl/types.h"
#include "twinccl/errors.h"

namespace twinccl::nccl {
namespace {

using Clock = std::chrono::steady_clock;

ncclConfig_t make_config(const std::string& name) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 1;
#if NCCL_VERSION_CODE >= NCCL_VERSION(2, 19, 0)
  config.commName = name.c_str();
#else
  (void)name;
#endif
  return config;
}

std::string where_text(std::string_view call, const std::string& comm, int rank, const Where& where) {
  return std::string(call) + " on comm '" + comm + "' rank " + std::to_string(rank) + " (" +
         describe_call_site(where) + ")";
}

}  // namespace

std::unique_ptr<NcclCommunicator> NcclCommunicator::create(const CommunicatorOptions& options) {
  DeviceGuard guard(options.device);
  auto stream = std::make_shared<StreamContext>(options.device);
  ncclComm_t comm = nullptr;
  ncclConfig_t config = make_config(options.name);
  check_nccl(ncclCommInitRankConfig(&comm, options.nranks, options.id, options.rank, &config), nullptr,
             "ncclCommInitRankConfig for comm '" + options.name + "' rank " + std::to_string(options.rank) + " of " +
                 std::to_string(options.nranks) + " on GPU " + std::to_string(options.device));
  auto ctx = std::make_shared<CommContext>(comm, std::move(stream), options.rank, options.nranks, options.name,
                                           options.timeout, options.signal);
  return std::make_unique<NcclCommunicator>(std::move(ctx));
}

NcclCommunicator::NcclCommunicator(std::shared_ptr<CommContext> ctx) : ctx_(std::move(ctx)) {}

NcclCommunicator::~NcclCommunicator() {
  if (group_depth_ > 0) {
    while (group_depth_-- > 0) (void)ncclGroupEnd();  // a group left open by an exception
  }
  if (!ctx_->aborted()) {
    // Drain the stream within the timeout; a stream that never drains means a peer is gone.
    const auto deadline = Clock::now() + ctx_->timeout();
    cudaError_t rc = cudaErrorNotReady;
    while ((rc = cudaStreamQuery(ctx_->cuda_stream())) == cudaErrorNotReady && Clock::now() < deadline) {
      ncclResult_t async = ncclSuccess;
      if (ncclCommGetAsyncError(ctx_->comm(), &async) != ncclSuccess || (async != ncclSuccess && async != ncclInProgress))
        break;
      if (ctx_->signal() && ctx_->signal()->raised.load()) break;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    if (rc != cudaSuccess) ctx_->abort("destroyed while work was still pending or failed");
  }
  release_reduce_ops();
  scratch_.reset();
}

Buffer NcclCommunicator::alloc(std::size_t count, DataType dtype) {
  const std::size_t element = size_of(dtype);
  if (count != 0 && element > std::numeric_limits<std::size_t>::max() / count) {
    throw InvalidArgument("alloc on comm '" + name() + "': " + std::to_string(count) + " elements of " +
                          std::string(twinccl::name(dtype)) + " overflow size_t");
  }
  ctx_->throw_if_aborted("alloc on comm '" + name() + "'");
  return Buffer(allocate_device_memory(ctx_->stream(), count * element), 0, count, dtype);
}

void* NcclCommunicator::barrier_scratch() {
  if (!scratch_) scratch_ = allocate_device_memory(ctx_->stream(), sizeof(std::int32_t));
  return scratch_->data();
}

void NcclCommunicator::release_reduce_ops() {
  if (reduce_ops_.empty()) return;
  if (!ctx_->aborted()) {
    for (ncclRedOp_t op : reduce_ops_) destroy_reduce_op(op, ctx_->comm());
  }
  reduce_ops_.clear();
}

Work NcclCommunicator::submit(OpDesc op) {
  if (ctx_->aborted()) ctx_->throw_if_aborted(where_text(twinccl::name(op.kind), name(), rank(), op.where));
  DeviceGuard guard(ctx_->device());
  const EnqueueTarget target{ctx_->comm(), ctx_->cuda_stream(), rank(), size(), &ctx_->name(), ++op_count_};
  void* scratch = op.kind == OpKind::barrier ? barrier_scratch() : nullptr;
  if (group_depth_ > 0) {
    enqueue(op, target, scratch, reduce_ops_);
    return Work(std::make_shared<NcclWork>(ctx_, group_completion_));
  }
  try {
    enqueue(op, target, scratch, reduce_ops_);
  } catch (...) {
    release_reduce_ops();
    throw;
  }
  release_reduce_ops();
  auto completion = std::make_shared<Completion>(ctx_, twinccl::name(op.kind), op_count_, op.where);
  completion->record();
  Work work(std::make_shared<NcclWork>(ctx_, std::move(completion)));
  if (!op.async_op) work.wait();
  return work;
}

void NcclCommunicator::group_start(Where where) {
  ctx_->throw_if_aborted(where_text("group_start", name(), rank(), where));
  check_nccl(ncclGroupStart(), ctx_->comm(), where_text("group_start", name(), rank(), where));
  if (group_depth_++ == 0) {
    group_completion_ = std::make_shared<Completion>(ctx_, "group", op_count_ + 1, where);
  }
}

Work NcclCommunicator::group_end(CallOptions opts, Where where) {
  if (group_depth_ == 0) {
    throw InvalidArgument(where_text("group_end", name(), rank(), where) + ": no group is open");
  }
  --group_depth_;
  DeviceGuard guard(ctx_->device());
  const ncclResult_t rc = ncclGroupEnd();
  if (group_depth_ > 0) {
    check_nccl(rc, ctx_->comm(), where_text("group_end (nested)", name(), rank(), where));
    return Work(std::make_shared<NcclWork>(ctx_, group_completion_));
  }
  std::shared_ptr<Completion> completion = std::move(group_completion_);
  if (rc != ncclSuccess) {
    release_reduce_ops();
    throw_nccl_error(rc, ctx_->comm(), where_text("group_end", name(), rank(), where));
  }
  release_reduce_ops();
  completion->record();
  Work work(std::make_shared<NcclWork>(ctx_, std::move(completion)));
  if (!opts.async_op) work.wait();
  return work;
}

std::unique_ptr<Communicator> NcclCommunicator::split(int color, int key, std::string new_name, Where where) {
  const std::string what = where_text("split", name(), rank(), where);
  ctx_->throw_if_aborted(what);
  if (group_depth_ > 0) throw InvalidArgument(what + ": split inside an open group");
  if (color < kNoColor) {
    throw InvalidArgument(what + ": color=" + std::to_string(color) + " (use a color >= 0, or kNoColor)");
  }
  if (new_name.empty()) new_name = name() + ".split(" + std::to_string(color) + ")";
  DeviceGuard guard(ctx_->device());
  // Earlier async work on this communicator must not race with NCCL's setup of the child.
  check_cuda(cudaStreamSynchronize(ctx_->cuda_stream()), what);
  auto stream = color == kNoColor ? nullptr : std::make_shared<StreamContext>(ctx_->device());
  ncclConfig_t config = make_config(new_name);
  ncclComm_t child = nullptr;
  check_nccl(ncclCommSplit(ctx_->comm(), color == kNoColor ? NCCL_SPLIT_NOCOLOR : color, key, &child, &config),
             ctx_->comm(), what + " color=" + std::to_string(color) + " key=" + std::to_string(key));
  if (child == nullptr) return nullptr;
  int child_rank = 0;
  int child_size = 0;
  check_nccl(ncclCommUserRank(child, &child_rank), child, what + ": ncclCommUserRank");
  check_nccl(ncclCommCount(child, &child_size), child, what + ": ncclCommCount");
  auto ctx = std::make_shared<CommContext>(child, std::move(stream), child_rank, child_size, std::move(new_name),
                                           ctx_->timeout(), ctx_->signal());
  return std::make_unique<NcclCommunicator>(std::move(ctx));
}

}  // namespace twinccl::nccl
