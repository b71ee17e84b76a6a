// RankScratch (see rank_scratch.h).
#include "nccl/rank_scratch.h"

#include <utility>

#include "nccl/memory.h"

namespace twinccl::nccl {
namespace {
constexpr std::size_t kAlign = 256;

std::size_t aligned(std::size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }
}  // namespace

std::shared_ptr<RankScratch> RankScratch::allocate(std::shared_ptr<StreamContext> stream,
                                                   int nranks) {
  const std::size_t ranks = nranks > 0 ? static_cast<std::size_t>(nranks) : 1;
  const std::size_t bytes = aligned(kBarrierElements * sizeof(std::int32_t)) +
                            aligned(ranks * kRecordBytes) + kAlign + kVerdictBytes;
  return std::shared_ptr<RankScratch>(
      new RankScratch(allocate_device_memory(std::move(stream), bytes)));
}

RankScratch::RankScratch(std::shared_ptr<Memory> memory)
    : memory_(std::move(memory)), top_(aligned(kBarrierElements * sizeof(std::int32_t))) {}

void* RankScratch::barrier_element() {
  std::lock_guard<std::mutex> lock(mu_);
  const std::size_t i = next_element_++ % kBarrierElements;
  return static_cast<char*>(memory_->data()) + i * sizeof(std::int32_t);
}

RankScratch::Lease::Lease(const std::shared_ptr<RankScratch>& scratch, std::size_t bytes) {
  if (!scratch || bytes == 0) return;
  std::lock_guard<std::mutex> lock(scratch->mu_);
  const auto me = std::this_thread::get_id();
  if (scratch->leases_ > 0 && scratch->owner_ != me) return;
  const std::size_t start = aligned(scratch->top_);
  if (start > scratch->bytes() || scratch->bytes() - start < bytes) return;
  scratch_ = scratch;
  previous_top_ = scratch->top_;
  data_ = static_cast<char*>(scratch->memory_->data()) + start;
  scratch->top_ = start + bytes;
  scratch->owner_ = me;
  ++scratch->leases_;
}

RankScratch::Lease::~Lease() {
  if (!scratch_) return;
  std::lock_guard<std::mutex> lock(scratch_->mu_);
  scratch_->top_ = previous_top_;
  --scratch_->leases_;
}

}  // namespace twinccl::nccl
