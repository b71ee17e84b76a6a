// NcclCommunicator: lifecycle, submit, groups, split (see communicator.h).
//
// How it works: submit() checks the communicator is alive (the base class checked the op and that
// no other communicator has a group open on this thread), makes the GPU current, orders the stream
// (ordering.h), enqueues the op's NCCL calls, polls until NCCL really queued them (non-blocking
// communicators may answer ncclInProgress), and only then records a CUDA event behind them. Inside
// a group (group_depth_ > 0) the ops share one Completion recorded at the outermost group_end,
// because NCCL only launches a group's work at ncclGroupEnd. premul_sum reduce ops are destroyed
// once the call that uses them has been issued (after the outermost group_end inside a group).
#include "nccl/communicator.h"

#include <exception>
#include <iostream>
#include <limits>
#include <mutex>

#include "nccl/check.h"
#include "nccl/collectives.h"
#include "nccl/memory.h"
#include "nccl/ordering.h"
#include "nccl/split_names.h"
#include "nccl/types.h"
#include "twinccl/call_site_text.h"
#include "twinccl/errors.h"

namespace twinccl::nccl {
namespace {

// CallOptions.algorithm is the emulator's; NCCL picks its own (NCCL_ALGO). Said once per process.
void note_algorithm_ignored(const OpDesc& op) {
  static std::once_flag once;
  std::call_once(once, [&] {
    std::cerr << "twinccl: note: CallOptions.algorithm='" << op.algorithm << "' ("
              << describe_call_site(op.where)
              << ") is ignored by the NCCL backend: NCCL chooses its algorithm (see NCCL_ALGO); "
                 "said once\n";
  });
}

// fp8 where NCCL refuses it: reductions below sm_90; avg/premul_sum at one rank, where NCCL's
// one-rank path (ncclLaunchOneRank, 2.28) rejects fp8. avg of one rank is the value itself, so it
// becomes sum (a copy); premul_sum is refused with the reason.
void adapt_fp8(OpDesc& op, StreamContext& stream, int size, const std::string& what) {
  const bool fp8 = op.dtype == DataType::float8_e4m3 || op.dtype == DataType::float8_e5m2;
  const bool reduces = op.kind == OpKind::all_reduce || op.kind == OpKind::reduce_scatter ||
                       op.kind == OpKind::reduce || op.kind == OpKind::reduce_scatter_v;
  if (!fp8 || !reduces) return;
  if (const int sm = stream.sm_major(); sm < 9) {
    throw InvalidArgument(what + ": " + std::string(name(op.dtype)) +
                          " reductions need a GPU of compute capability "
                          "9.0 (sm_90) or newer; GPU " +
                          std::to_string(stream.device()) + " is sm_" + std::to_string(sm) +
                          "x (NCCL refuses them there too)");
  }
  if (size != 1) return;
  if (op.op.kind == ReduceKind::avg) op.op = ReduceOp::sum();
  if (op.op.kind == ReduceKind::premul_sum) {
    throw InvalidArgument(
        what + ": premul_sum on " + std::string(name(op.dtype)) +
        " with one rank: NCCL's one-rank "
        "path does not support float8 scaling; use a wider type or scale before the call");
  }
}

}  // namespace

ncclConfig_t make_config(const std::string& name) {
  ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
  config.blocking = 0;  // abortable init/split/finalize (polled in CommContext::wait_ready)
  config.commName = name.c_str();
  return config;
}

std::unique_ptr<Communicator> NcclCommunicator::adopt(std::shared_ptr<StreamContext> stream,
                                                      std::shared_ptr<CommContext> ctx) const {
  std::weak_ptr<CommContext> weak = ctx;
  stream->set_abort([weak](const std::string& why) {
    if (auto c = weak.lock()) c->abort(why);
  });
  auto out = std::make_unique<NcclCommunicator>(std::move(ctx), scratch_);
  out->caller_stream_ = caller_stream_;
  return out;
}

std::unique_ptr<NcclCommunicator> NcclCommunicator::create(const CommunicatorOptions& options) {
  DeviceGuard guard(options.device);
  auto stream = std::make_shared<StreamContext>(options.device, options.timeout, options.signal);
  // Before the init, so before any peer's kernel can wait for this rank (rank_scratch.h).
  auto scratch = RankScratch::allocate(stream, options.nranks);
  auto ctx = std::make_shared<CommContext>(nullptr, stream, options.rank, options.nranks,
                                           options.name, options.timeout, options.signal);
  const std::string what = call_site_text("ncclCommInitRankConfig", options.name, options.rank) +
                           " of " + std::to_string(options.nranks) + " on GPU " +
                           std::to_string(options.device);
  ncclConfig_t config = make_config(ctx->name());
  ncclComm_t comm = nullptr;
  const ncclResult_t rc =
      api().ncclCommInitRankConfig(&comm, options.nranks, options.id, options.rank, &config);
  if (rc != ncclSuccess && rc != ncclInProgress) {
    if (comm != nullptr) (void)api().ncclCommAbort(comm);
    throw_nccl_error(rc, nullptr, what);
  }
  ctx->set_comm(comm, options.rank, options.nranks);
  ctx->wait_ready(what);  // aborts the comm itself on failure
  std::weak_ptr<CommContext> weak = ctx;
  stream->set_abort([weak](const std::string& why) {
    if (auto c = weak.lock()) c->abort(why);
  });
  return std::make_unique<NcclCommunicator>(std::move(ctx), std::move(scratch));
}

NcclCommunicator::NcclCommunicator(std::shared_ptr<CommContext> ctx,
                                   std::shared_ptr<RankScratch> scratch)
    : ctx_(std::move(ctx)),
      scratch_(std::move(scratch)),
      barrier_element_(scratch_->barrier_element()) {}

NcclCommunicator::~NcclCommunicator() {
  graph_.end_capture_quietly();  // a capturing stream can be neither drained nor finalized
  if (group_depth_ > 0) {
    // A group left open (an exception, or no group_end): NCCL's group state is per thread, so it
    // must be closed here. On a non-blocking comm the closing ncclGroupEnd may answer
    // ncclInProgress, and no other call (finalize) may follow until it is polled to ncclSuccess.
    // That ncclGroupEnd launches the group's work: ordered like any launch (ordering.h).
    try {
      DeviceGuard guard(ctx_->device());
      order_launch(*ctx_->stream(), caller_stream_,
                   [&] { return "group left open at destruction of comm '" + name() + "'"; });
    } catch (const std::exception&) {
    }
    bool in_progress = false;
    while (group_depth_-- > 0) in_progress = api().ncclGroupEnd() == ncclInProgress || in_progress;
    if (in_progress && !ctx_->aborted() && std::uncaught_exceptions() == 0) {
      try {
        ctx_->wait_ready("group left open at destruction of comm '" + name() + "'");
      } catch (const std::exception&) {
      }  // wait_ready aborted the comm on failure
    }
  }
  if (!ctx_->aborted()) {
    if (std::uncaught_exceptions() > 0) {
      // The rank failed: tell the others first, then abort (never finalize: it may wait on peers).
      ctx_->stream()->fail_fast(
          "rank " + std::to_string(rank()) + " of comm '" + name() +
          "' failed (its communicator was destroyed while an exception unwound)");
    } else {
      auto drained = StreamContext::Drain::timed_out;
      try {
        drained = ctx_->stream()->drain("destroying comm '" + name() + "'");
      } catch (const std::exception&) {
      }
      if (drained != StreamContext::Drain::idle)
        ctx_->abort("destroyed while work was still pending or failed");
    }
  }
  release_reduce_ops();
  scratch_.reset();
}

Buffer NcclCommunicator::do_alloc(std::size_t count, DataType dtype, std::size_t bytes) {
  ctx_->throw_if_aborted(call_site_text("alloc", name(), rank()));
  return Buffer(allocate_device_memory(ctx_->stream(), bytes), 0, count, dtype);
}

void NcclCommunicator::release_reduce_ops() {
  if (reduce_ops_.empty()) return;
  // ncclRedOpDestroy only on a comm that is not aborted and no longer ncclInProgress; otherwise
  // the ops stay with the comm, which frees them when it is destroyed or aborted.
  if (ctx_->ready()) {
    for (ncclRedOp_t op : reduce_ops_) destroy_reduce_op(op, ctx_->comm());
  }
  reduce_ops_.clear();
}

Work NcclCommunicator::submit(OpDesc op) {
  // The launch path builds no message unless something fails (host overhead per call).
  auto what = [&] { return call_site_text(twinccl::name(op.kind), name(), rank(), op.where); };
  if (ctx_->aborted()) ctx_->throw_if_aborted(what());
  if (!op.algorithm.empty()) note_algorithm_ignored(op);
  if (op.dtype == DataType::float8_e4m3 || op.dtype == DataType::float8_e5m2)
    adapt_fp8(op, *ctx_->stream(), size(), what());
  DeviceGuard guard(ctx_->device());
  const EnqueueTarget target{ctx_->comm(), ctx_->cuda_stream(), rank(),
                             size(),       &ctx_->name(),       ++op_count_};
  void* scratch = op.kind == OpKind::barrier ? barrier_element_ : nullptr;
  if (group_depth_ > 0) {
    enqueue(op, target, scratch, reduce_ops_);
    return Work(std::make_shared<NcclWork>(ctx_, group_completion_));
  }
  auto completion = std::make_shared<Completion>(ctx_, twinccl::name(op.kind), op_count_, op.where);
  auto describe = [&] { return completion->describe(); };
  try {
    order_launch(*ctx_->stream(), caller_stream_, describe);
    t_nccl_in_progress = false;
    enqueue(op, target, scratch, reduce_ops_);
    // Queued for real before the event is recorded: polled when NCCL answered ncclInProgress (an
    // ncclSuccess already came after NCCL's own ncclCommGetAsyncError; check.h).
    if (t_nccl_in_progress) ctx_->wait_ready_lazy(describe);
  } catch (...) {
    release_reduce_ops();  // only if NCCL is done with the comm (else NCCL frees them with it)
    throw;
  }
  // NCCL: after ncclInProgress, no other call on the comm until ncclCommGetAsyncError says
  // ncclSuccess; so the premul_sum ops are destroyed only now (docs/nccl-rules-review.md).
  release_reduce_ops();
  completion->record();
  Work work(std::make_shared<NcclWork>(ctx_, std::move(completion)));
  if (!op.async_op) work.wait();
  return work;
}

void NcclCommunicator::do_group_start(Where where) {
  const std::string what = call_site_text("group_start", name(), rank(), where);
  ctx_->throw_if_aborted(what);
  check_nccl(api().ncclGroupStart(), ctx_->comm(), what);
  if (group_depth_++ == 0)
    group_completion_ = std::make_shared<Completion>(ctx_, "group", op_count_ + 1, where);
}

Work NcclCommunicator::do_group_end(const CallOptions& opts, Where where) {
  if (group_depth_ == 0) {
    throw InvalidArgument(call_site_text("group_end", name(), rank(), where) +
                          ": no group is open");
  }
  --group_depth_;
  DeviceGuard guard(ctx_->device());
  if (group_depth_ > 0) {
    check_nccl(api().ncclGroupEnd(), ctx_->comm(),
               call_site_text("group_end (nested)", name(), rank(), where));
    return Work(std::make_shared<NcclWork>(ctx_, group_completion_));
  }
  std::shared_ptr<Completion> completion = std::move(group_completion_);
  // The group's kernels are launched by ncclGroupEnd: order the stream just before it.
  order_launch(*ctx_->stream(), caller_stream_, [&] { return completion->describe(); });
  const ncclResult_t rc = api().ncclGroupEnd();
  if (rc != ncclSuccess && rc != ncclInProgress) {
    release_reduce_ops();
    throw_nccl_error(rc, ctx_->comm(), call_site_text("group_end", name(), rank(), where));
  }
  try {
    ctx_->wait_ready(completion->describe());
  } catch (...) {
    release_reduce_ops();
    throw;
  }
  release_reduce_ops();  // after the poll: no NCCL call on a comm that is still ncclInProgress
  completion->record();
  Work work(std::make_shared<NcclWork>(ctx_, std::move(completion)));
  if (!opts.async_op) work.wait();
  return work;
}

std::unique_ptr<Communicator> NcclCommunicator::do_split(int color, int key, std::string new_name,
                                                         Where where) {
  const std::string what = call_site_text("split", name(), rank(), where);
  ctx_->throw_if_aborted(what);
  // The ranks of a color must agree on the name (split_names.h): a color that does not takes part
  // in ncclCommSplit without a color, so the other colors still get theirs and the parent stays
  // usable, as on the emulator; its ranks then throw MismatchError.
  const std::string mismatch = split_name_disagreement(ctx_, scratch_, caller_stream_, ++op_count_,
                                                       color, key, new_name, where);
  if (!mismatch.empty()) color = kNoColor;
  if (new_name.empty()) new_name = name() + ".split(" + std::to_string(color) + ")";
  DeviceGuard guard(ctx_->device());
  // ncclCommSplit is a host-side collective over the parent; work in flight on the parent's
  // stream does not need to drain first. The child's name lives in its context (config.commName).
  std::shared_ptr<StreamContext> stream;
  std::shared_ptr<CommContext> child_ctx;
  if (color != kNoColor) {
    stream = std::make_shared<StreamContext>(ctx_->device(), ctx_->timeout(), ctx_->signal());
    child_ctx = std::make_shared<CommContext>(nullptr, stream, -1, 0, std::move(new_name),
                                              ctx_->timeout(), ctx_->signal());
  }
  ncclConfig_t config = make_config(child_ctx ? child_ctx->name() : name());
  ncclComm_t child = nullptr;
  const std::string call = what + " color=" + std::to_string(color) + " key=" + std::to_string(key);
  const ncclResult_t rc = api().ncclCommSplit(
      ctx_->comm(), color == kNoColor ? NCCL_SPLIT_NOCOLOR : color, key, &child, &config);
  if (rc != ncclSuccess && rc != ncclInProgress) throw_nccl_error(rc, ctx_->comm(), call);
  // NCCL (2.19 .. 2.30, init.cc ncclCommInitChildComm): a non-blocking split runs as a job of the
  // PARENT, which stays ncclInProgress until it ends; `child` is NULL until then and written by
  // NCCL's thread. So the parent is polled, and `child` read only afterwards. On failure the
  // parent is aborted (which joins the job, so `child` is final) and a child made is aborted too.
  try {
    ctx_->wait_ready(call);
  } catch (...) {
    if (child != nullptr) (void)api().ncclCommAbort(child);
    throw;
  }
  if (child == nullptr && color != kNoColor) {
    throw BackendError(call +
                       ": ncclCommSplit finished without a new communicator for this rank's color");
  }
  if (!mismatch.empty()) throw MismatchError(mismatch);
  if (child == nullptr) return nullptr;
  child_ctx->set_comm(child, -1, 0);
  child_ctx->wait_ready(call + ": the new communicator");
  int child_rank = 0;
  int child_size = 0;
  check_nccl(api().ncclCommUserRank(child, &child_rank), child, what + ": ncclCommUserRank");
  check_nccl(api().ncclCommCount(child, &child_size), child, what + ": ncclCommCount");
  child_ctx->set_comm(child, child_rank, child_size);
  return adopt(std::move(stream), std::move(child_ctx));
}

}  // namespace twinccl::nccl
