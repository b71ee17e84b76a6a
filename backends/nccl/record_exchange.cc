#include "nccl/record_exchange.h"

#include <utility>

#include "nccl/check.h"
#include "nccl/memory.h"
#include "nccl/ordering.h"
#include "nccl/work.h"

namespace twinccl::nccl {

std::uint64_t fnv1a(const void* data, std::size_t bytes) {
  std::uint64_t h = 14695981039346656037ull;
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

RecordExchange::RecordExchange(std::shared_ptr<CommContext> parent, cudaStream_t caller,
                               std::string_view op, std::uint64_t number,
                               std::source_location where, std::size_t bytes, std::size_t slots)
    : parent_(std::move(parent)),
      caller_(caller),
      op_(op),
      number_(number),
      where_(where),
      bytes_(bytes),
      memory_(allocate_device_memory(parent_->stream(), bytes * slots)) {}

void RecordExchange::put(std::size_t slot, const void* record) {
  memory_->copy_in(slot * bytes_, record, bytes_);
}

void RecordExchange::get(std::size_t slot, void* record) {
  memory_->copy_out(slot * bytes_, record, bytes_);
}

void* RecordExchange::slot(std::size_t i) {
  return static_cast<char*>(memory_->data()) + i * bytes_;
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
