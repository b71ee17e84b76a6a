// Communicator: the one collective API, the same on the emulator and on NCCL.
//
//   twinccl::run(argc, argv, [](twinccl::Communicator& world) {
//     auto x = world.alloc(1024, DataType::float32);
//     world.all_reduce(x, x, ReduceOp::sum());                      // in place, blocking
//     auto w = world.all_gather(x, y, {.async_op = true}); w.wait(); // asynchronous
//   });
//
// Every call is ordered on the communicator's stream and returns a Work; without async_op the call
// waits for it before returning. Counts and in-place rules are NCCL's (see operation.h).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <source_location>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "twinccl/buffer.h"
#include "twinccl/data_type.h"
#include "twinccl/operation.h"
#include "twinccl/reduce_op.h"
#include "twinccl/work.h"

namespace twinccl {

using Where = std::source_location;

struct CallOptions {
  bool async_op = false;            // return at once with a Work to wait on
  std::string_view algorithm = {};  // force an algorithm by name ("ring", "direct", ...)
};

class CallObserver;  // call_observer.h

// Passed to split() by a rank that wants no sub-communicator (NCCL_SPLIT_NOCOLOR).
inline constexpr int kNoColor = -1;

class Communicator {
 public:
  virtual ~Communicator();  // this thread's group on it, if any, is gone with it
  Communicator() = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual const std::string& name() const = 0;
  virtual std::string_view backend() const = 0;  // "emu" or "nccl"

  // Memory for this communicator's device: host memory on the emulator, GPU memory on NCCL.
  // A size that overflows is refused (InvalidArgument naming comm and rank).
  Buffer alloc(std::size_t count, DataType dtype);

  // ---- collectives, NCCL's shape (raw pointers; counts as in operation.h) ----
  Work all_reduce(const void* send, void* recv, std::size_t count, DataType dtype, ReduceOp op,
                  CallOptions opts = {}, Where where = Where::current());
  Work reduce_scatter(const void* send, void* recv, std::size_t recv_count, DataType dtype,
                      ReduceOp op, CallOptions opts = {}, Where where = Where::current());
  Work all_gather(const void* send, void* recv, std::size_t send_count, DataType dtype,
                  CallOptions opts = {}, Where where = Where::current());
  Work broadcast(const void* send, void* recv, std::size_t count, DataType dtype, int root,
                 CallOptions opts = {}, Where where = Where::current());
  Work reduce(const void* send, void* recv, std::size_t count, DataType dtype, ReduceOp op,
              int root, CallOptions opts = {}, Where where = Where::current());
  // count elements to and from every peer: send and recv hold size()*count.
  Work all_to_all(const void* send, void* recv, std::size_t count, DataType dtype,
                  CallOptions opts = {}, Where where = Where::current());
  Work gather(const void* send, void* recv, std::size_t send_count, DataType dtype, int root,
              CallOptions opts = {}, Where where = Where::current());
  Work scatter(const void* send, void* recv, std::size_t recv_count, DataType dtype, int root,
               CallOptions opts = {}, Where where = Where::current());
  Work send(const void* data, std::size_t count, DataType dtype, int peer, CallOptions opts = {},
            Where where = Where::current());
  Work recv(void* data, std::size_t count, DataType dtype, int peer, CallOptions opts = {},
            Where where = Where::current());
  Work barrier(CallOptions opts = {}, Where where = Where::current());

  // ---- uneven variants (every rank passes the same count vectors of size() entries) ----
  // recv holds sum(recv_counts); rank r's send_count must be recv_counts[r]. Displacements
  // (element offsets in recv per rank) may be empty for packed rank order.
  Work all_gather_v(const void* send, void* recv, std::span<const std::size_t> recv_counts,
                    std::span<const std::size_t> recv_displs, DataType dtype, CallOptions opts = {},
                    Where where = Where::current());
  // send holds sum(recv_counts) (packed, or at send_displs); rank r receives recv_counts[r].
  Work reduce_scatter_v(const void* send, void* recv, std::span<const std::size_t> recv_counts,
                        std::span<const std::size_t> send_displs, DataType dtype, ReduceOp op,
                        CallOptions opts = {}, Where where = Where::current());
  // send_counts[p]: elements this rank sends to p, at send_displs[p]; recv_counts[p]: elements it
  // receives from p, at recv_displs[p]. Empty displacements = packed. send_counts[p] on rank r
  // must equal recv_counts[r] on rank p.
  Work all_to_all_v(const void* send, std::span<const std::size_t> send_counts,
                    std::span<const std::size_t> send_displs, void* recv,
                    std::span<const std::size_t> recv_counts,
                    std::span<const std::size_t> recv_displs, DataType dtype, CallOptions opts = {},
                    Where where = Where::current());
  // Root receives counts[r] elements from rank r (packed or at displs); rank r sends counts[r].
  Work gather_v(const void* send, void* recv, std::span<const std::size_t> counts,
                std::span<const std::size_t> displs, DataType dtype, int root,
                CallOptions opts = {}, Where where = Where::current());
  // Root sends counts[r] elements to rank r (packed or at displs); rank r receives counts[r].
  Work scatter_v(const void* send, void* recv, std::span<const std::size_t> counts,
                 std::span<const std::size_t> displs, DataType dtype, int root,
                 CallOptions opts = {}, Where where = Where::current());

  // ---- the same with Buffers: counts come from the buffers, sizes are checked ----
  Work all_reduce(const Buffer& send, const Buffer& recv, ReduceOp op = ReduceOp::sum(),
                  CallOptions opts = {}, Where where = Where::current());
  Work reduce_scatter(const Buffer& send, const Buffer& recv, ReduceOp op = ReduceOp::sum(),
                      CallOptions opts = {}, Where where = Where::current());
  Work all_gather(const Buffer& send, const Buffer& recv, CallOptions opts = {},
                  Where where = Where::current());
  Work broadcast(const Buffer& buffer, int root, CallOptions opts = {},
                 Where where = Where::current());
  Work reduce(const Buffer& send, const Buffer& recv, ReduceOp op, int root, CallOptions opts = {},
              Where where = Where::current());
  Work all_to_all(const Buffer& send, const Buffer& recv, CallOptions opts = {},
                  Where where = Where::current());
  Work send(const Buffer& data, int peer, CallOptions opts = {}, Where where = Where::current());
  Work recv(const Buffer& data, int peer, CallOptions opts = {}, Where where = Where::current());

  // ---- groups: operations between start and end are issued together (NCCL's ncclGroupStart/
  // End); send/recv pairs inside a group never deadlock. Groups nest; the outermost end issues.
  // A group belongs to the thread that opened it, as NCCL's: while it is open, this thread's calls
  // on any other communicator are refused (InvalidArgument), on every backend.
  void group_start(Where where = Where::current());
  // Returns the Work of the whole group (already waited on unless opts.async_op). The level is
  // closed even when this throws.
  Work group_end(CallOptions opts = {}, Where where = Where::current());
  // Closes one level of this thread's open group that an exception abandoned (Group's destructor
  // calls it while unwinding); nothing when this thread has no group open here. The emulator
  // discards the group's operations (never issued; their Work fails with AbortedError); NCCL
  // closes it with group_end, ignoring errors. Either way no later call is swallowed by a group
  // nobody will end.
  void group_abort(Where where = Where::current()) noexcept;

  // ---- sub-communicators: ranks passing the same color form one, ordered by (key, rank).
  // kNoColor returns nullptr. Collective over this communicator; refused inside a group, for a
  // color below kNoColor and for a name over kMaxCommNameBytes or holding a control byte.
  std::unique_ptr<Communicator> split(int color, int key, std::string name = {},
                                      Where where = Where::current());
  // ---- a sub-communicator made by its members only, as NCCL's ncclCommInitRank with a unique id
  // the members share (MindSpore's `if rank in ids: create_group(...)`, torch's
  // new_group(use_local_synchronization=True)): every rank listed in `ranks` (ranks of this
  // communicator; rank i of the new one is ranks[i]) calls it with the same ranks and name, and
  // no other rank calls it. Blocks until every member called it. An empty name gets one made of
  // this communicator's name and the ranks. Refused inside a group, for an empty list, a rank out
  // of range or listed twice, a caller not listed, and a name split() refuses.
  std::unique_ptr<Communicator> subcommunicator(std::span<const int> ranks, std::string name = {},
                                                Where where = Where::current());

  // Issues one described operation. The typed calls above fill OpDesc and land here.
  Work issue(OpDesc op);
  // Called by issue() when a call of this rank failed its own checks (`message` is the
  // InvalidArgument's text); wrappers forward it. The emulator keeps it to tell the peers why this
  // rank never joined them.
  virtual void rejected(const OpDesc& op, const std::string& message) noexcept {
    (void)op;
    (void)message;
  }

  // ---- declared compute, for simulated time (docs/traces.md). The rank tells the trace
  // recorder (the observer) that it computes here for `seconds` (or `flops` floating-point
  // operations, turned into time by the replay's GPU rate). No effect on the data; a no-op where
  // nothing records (NCCL, or the emulator without TWINCCL_TOPOLOGY/TWINCCL_TRACE).
  virtual void compute(double seconds);
  virtual void compute_flops(double flops);
  // ---- observing: from now on every call of this communicator is shown to `observer` once it
  // passed its checks (call_observer.h); nullptr stops. Not thread-safe against calls in flight.
  void observe(std::shared_ptr<CallObserver> observer) { observer_ = std::move(observer); }
  const std::shared_ptr<CallObserver>& observer() const { return observer_; }
  // ---- the caller's device stream (NCCL): every later call on this communicator is ordered on
  // the GPU after the work the caller queued on `stream` (a cudaStream_t; default: CUDA's legacy
  // default stream, as torch's default current stream). Ignored where there is no device
  // (emulator).
  virtual void set_caller_stream(void* stream) { (void)stream; }

 protected:
  // ---- what a backend implements. The public calls above check what every backend must (the
  // arguments, the thread rule of groups), report to the observer, and then call these.
  // An operation, validated for this rank.
  virtual Work submit(OpDesc op) = 0;
  // `bytes` (count * the type's size) does not overflow.
  virtual Buffer do_alloc(std::size_t count, DataType dtype, std::size_t bytes) = 0;
  virtual void do_group_start(Where where) = 0;
  virtual Work do_group_end(const CallOptions& opts, Where where) = 0;
  // Discards the innermost open group level (its operations never issued) and returns true; false
  // (the default) when the backend cannot, and group_abort closes the level with group_end.
  virtual bool do_group_abort(Where where) noexcept;
  // Arguments checked (color >= kNoColor, name allowed, no group open on this thread).
  virtual std::unique_ptr<Communicator> do_split(int color, int key, std::string name,
                                                 Where where) = 0;
  // Arguments checked (ranks valid, this rank among them, the name allowed and not empty, no group
  // open on this thread); `new_rank` is this rank's index in `ranks`.
  virtual std::unique_ptr<Communicator> do_subcommunicator(std::vector<int> ranks, int new_rank,
                                                           std::string name, Where where) = 0;

 private:
  Work submit_holding_buffers(OpDesc op);
  std::shared_ptr<CallObserver> observer_;
  [[noreturn]] void reject(const OpDesc& op, const std::string& message);
  void same_dtype(const OpDesc& op, const Buffer& send, const Buffer& recv);
  std::size_t per_rank(const OpDesc& op, const char* which, std::size_t total);
};

// RAII group: group_start() now, group_end() at scope exit; when an exception leaves the scope,
// group_abort() instead (the group's operations are discarded, the communicator is usable again).
class Group {
 public:
  explicit Group(Communicator& comm, Where where = Where::current());
  ~Group() noexcept(false);
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;
  // Closes the group now (group_end) and returns its Work; the destructor then does nothing.
  Work end(CallOptions opts = {}, Where where = Where::current());

 private:
  Communicator& comm_;
  int uncaught_;
  Where where_;
  bool open_ = true;
};

}  // namespace twinccl
