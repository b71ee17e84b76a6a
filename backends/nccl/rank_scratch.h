// RankScratch: the small device buffers TwinCCL's own NCCL calls need after a communicator is made
// (barrier's one element, the record exchanges of split and subcommunicator), in one cudaMalloc
// made with the rank's first communicator, before ncclCommInitRankConfig, and shared by every
// communicator split or made from it.
//
// Why: with several ranks on one GPU (NCCL >= 2.30, NCCL_MULTI_RANK_GPU_ENABLE=1) NCCL asks for
// every buffer to be allocated before the first collective: cudaMalloc and cudaFree synchronise
// the device, so a rank allocating mid-run (a split's exchange, a child's first barrier) waits for
// a peer's kernel that spins until this very rank joins it. Made before the rank's init, the
// buffer exists before any peer can have launched a kernel that waits for this rank.
//
//   auto scratch = RankScratch::allocate(stream, nranks);   // before ncclCommInitRankConfig
//   void* element = scratch->barrier_element();             // one per communicator
//   RankScratch::Lease lease(scratch, 4 * 256);              // LIFO; null data(): did not fit
//
// How it works: the first kBarrierElements x 4 bytes are barrier elements handed out in turn (two
// communicators share one only beyond that many; barrier's sum is never read, so sharing is
// harmless). The rest is a stack of leases: a lease takes the next 256-byte-aligned bytes and gives
// them back when it ends, innermost first. Sized for the largest exchange a communicator of
// `nranks` ranks (or any of its children, which are never larger) makes: subcommunicator's leader
// holds nranks records of 384 bytes and a 520-byte verdict at once. A lease that does not fit, or
// is asked for by a second thread while another holds leases, gets no memory, and the caller
// allocates its own as before. A lease ends only after its exchange finished or its communicator
// was aborted (a failed or timed-out wait aborts it, which ends its kernels), so no queued work
// still writes a region when the next lease gets it.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <thread>

#include "nccl/context.h"
#include "twinccl/buffer.h"

namespace twinccl::nccl {

class RankScratch {
 public:
  static constexpr std::size_t kBarrierElements = 256;
  static constexpr std::size_t kRecordBytes = 384;    // the largest record an exchange moves
  static constexpr std::size_t kVerdictBytes = 1024;  // subcommunicator's id and verdict

  static std::shared_ptr<RankScratch> allocate(std::shared_ptr<StreamContext> stream, int nranks);

  void* barrier_element();  // the next of kBarrierElements int32 elements, in turn
  std::size_t bytes() const { return memory_->bytes(); }

  class Lease {
   public:
    // `scratch` may be null (no memory then).
    Lease(const std::shared_ptr<RankScratch>& scratch, std::size_t bytes);
    ~Lease();
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    void* data() const { return data_; }  // nullptr: not leased

   private:
    std::shared_ptr<RankScratch> scratch_;
    void* data_ = nullptr;
    std::size_t previous_top_ = 0;
  };

 private:
  explicit RankScratch(std::shared_ptr<Memory> memory);
  std::shared_ptr<Memory> memory_;
  std::mutex mu_;
  std::size_t next_element_ = 0;
  std::size_t top_;         // first free byte of the lease stack
  std::size_t leases_ = 0;  // outstanding, all held by owner_
  std::thread::id owner_;
};

}  // namespace twinccl::nccl
