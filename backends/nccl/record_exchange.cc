#include "nccl/record_exchange.h"

#include <string>
#include <utility>

#include "nccl/check.h"
#include "nccl/memory.h"
#include "nccl/ordering.h"
#include "nccl/work.h"
#include "twinccl/errors.h"

namespace twinccl::nccl {

std::uint64_t fnv1a(const void* data, std::size_t bytes) {
  std::uint64_t h = 14695981039346656037ull;
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

RecordExchange::RecordExchange(std::shared_ptr<CommContext> parent,
                               const std::shared_ptr<RankScratch>& scratch, cudaStream_t caller,
                               std::string_view op, std::uint64_t number,
                               std::source_location where, std::size_t bytes, std::size_t slots)
    : parent_(std::move(parent)),
      caller_(caller),
      op_(op),
      number_(number),
      where_(where),
      bytes_(bytes),
      slots_(slots),
      lease_(scratch, bytes * slots) {
  if (lease_.data() == nullptr) own_ = allocate_device_memory(parent_->stream(), bytes * slots);
  data_ = static_cast<char*>(own_ ? own_->data() : lease_.data());
}

void RecordExchange::put(std::size_t i, const void* record) {
  copy_on_stream(*parent_->stream(), slot(i), record, bytes_, cudaMemcpyHostToDevice,
                 "RecordExchange::put");
}

void RecordExchange::get(std::size_t i, void* record) {
  copy_on_stream(*parent_->stream(), record, slot(i), bytes_, cudaMemcpyDeviceToHost,
                 "RecordExchange::get");
}

void* RecordExchange::slot(std::size_t i) {
  if (i >= slots_) {
    throw InvalidArgument("RecordExchange: slot " + std::to_string(i) + " of " +
                          std::to_string(slots_));
  }
  return data_ + i * bytes_;
}

void RecordExchange::run(const std::function<ncclResult_t()>& calls, std::string_view doing) {
  auto completion = std::make_shared<Completion>(parent_, op_, number_, where_);
  const std::string what = completion->describe() + ": " + std::string(doing);
  order_launch(*parent_->stream(), caller_, [&] { return what; });
  check_nccl(calls(), parent_->comm(), what);
  parent_->wait_ready(what);
  completion->record();
  NcclWork(parent_, completion).wait();
}

}  // namespace twinccl::nccl
