// Buffer and host Memory.
#include "twinccl/buffer.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "kernels_text.h"
#include "twinccl/call_site_text.h"

namespace twinccl {

namespace {

// "[first, first + n)" when it fits in size_t, else says that it overflows.
std::string range_text(std::size_t first, std::size_t n) {
  if (n > ~std::size_t{0} - first)
    return "[" + std::to_string(first) + ", " + std::to_string(first) + " + " + std::to_string(n) +
           " (overflows size_t))";
  return "[" + std::to_string(first) + ", " + std::to_string(first + n) + ")";
}

// True when [offset, offset + bytes) lies inside `size` bytes (overflow-safe).
bool inside(std::size_t offset, std::size_t bytes, std::size_t size) {
  return offset <= size && bytes <= size - offset;
}

void check_host_pointer(const void* host, std::size_t bytes, const char* where) {
  if (host == nullptr && bytes > 0) {
    throw InvalidArgument(std::string(where) + ": the host pointer is null but " +
                          std::to_string(bytes) + " bytes are to be copied");
  }
}

}  // namespace

void Memory::copy_in(std::size_t offset, const void* host, std::size_t bytes) {
  check_host_pointer(host, bytes, "Memory::copy_in");
  if (!inside(offset, bytes, bytes_)) {
    throw InvalidArgument("Memory::copy_in: range " + range_text(offset, bytes) +
                          " is outside the " + std::to_string(bytes_) + "-byte allocation");
  }
  if (bytes > 0) std::memmove(static_cast<char*>(data_) + offset, host, bytes);
}

void Memory::copy_out(std::size_t offset, void* host, std::size_t bytes) const {
  check_host_pointer(host, bytes, "Memory::copy_out");
  if (!inside(offset, bytes, bytes_)) {
    throw InvalidArgument("Memory::copy_out: range " + range_text(offset, bytes) +
                          " is outside the " + std::to_string(bytes_) + "-byte allocation");
  }
  if (bytes > 0) std::memmove(host, static_cast<const char*>(data_) + offset, bytes);
}

void Memory::copy_from(std::size_t offset, const Memory& src, std::size_t src_offset,
                       std::size_t bytes) {
  if (src.kind() == MemoryKind::host) {
    if (!inside(src_offset, bytes, src.bytes())) {
      throw InvalidArgument("Memory::copy_from: source range " + range_text(src_offset, bytes) +
                            " is outside its " + std::to_string(src.bytes()) + "-byte allocation");
    }
    copy_in(offset, static_cast<const char*>(src.data()) + src_offset, bytes);
  } else if (kind() == MemoryKind::host) {
    if (!inside(offset, bytes, bytes_)) {
      throw InvalidArgument("Memory::copy_from: destination range " + range_text(offset, bytes) +
                            " is outside its " + std::to_string(bytes_) + "-byte allocation");
    }
    src.copy_out(src_offset, static_cast<char*>(data_) + offset, bytes);
  } else {
    throw InvalidArgument(
        "Memory::copy_from: device-to-device copy is not supported by this memory");
  }
}

namespace {

class HostMemory final : public Memory {
 public:
  HostMemory(void* data, std::size_t bytes) : Memory(data, bytes, MemoryKind::host) {}
  ~HostMemory() override { std::free(data()); }
};

}  // namespace

std::shared_ptr<Memory> allocate_host_memory(std::size_t bytes) {
  constexpr std::size_t kAlign = 64;
  std::size_t rounded = (bytes + kAlign - 1) / kAlign * kAlign;
  if (rounded < bytes)
    throw InvalidArgument("allocate_host_memory: " + std::to_string(bytes) + " bytes overflows");
  if (rounded == 0) rounded = kAlign;
  void* p = std::aligned_alloc(kAlign, rounded);
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, rounded);
  return std::make_shared<HostMemory>(p, bytes);
}

Buffer::Buffer(std::shared_ptr<Memory> memory, std::size_t offset_bytes, std::size_t count,
               DataType dtype)
    : memory_(std::move(memory)), offset_bytes_(offset_bytes), count_(count), dtype_(dtype) {
  std::size_t element = size_of(dtype);
  if (!memory_) throw InvalidArgument("Buffer: null memory");
  if (count != 0 && element > (~std::size_t{0} - offset_bytes) / count) {
    throw InvalidArgument("Buffer: " + std::to_string(count) + " elements of " +
                          std::string(name(dtype)) + " overflow size_t");
  }
  if (offset_bytes + count * element > memory_->bytes()) {
    throw InvalidArgument("Buffer: " + std::to_string(count) + " elements of " +
                          std::string(name(dtype)) + " at byte " + std::to_string(offset_bytes) +
                          " do not fit in a " + std::to_string(memory_->bytes()) +
                          "-byte allocation");
  }
}

std::size_t alloc_bytes(std::string_view comm, int rank, std::size_t count, DataType dtype) {
  if (!is_valid(dtype)) {
    throw InvalidArgument(call_site_text("alloc", comm, rank) + ": data type value " +
                          detail::raw_value_text(dtype) + " is outside the DataType enum (count " +
                          std::to_string(count) + ")");
  }
  const std::size_t element = size_of(dtype);
  if (count != 0 && element > ~std::size_t{0} / count) {
    throw InvalidArgument(call_site_text("alloc", comm, rank) + ": " + std::to_string(count) +
                          " elements of " + std::string(name(dtype)) + " overflow size_t");
  }
  return count * element;
}

Buffer Buffer::host(std::size_t count, DataType dtype) {
  std::size_t element = size_of(dtype);
  if (count != 0 && element > ~std::size_t{0} / count) {
    throw InvalidArgument("Buffer::host: " + std::to_string(count) + " elements overflow size_t");
  }
  return Buffer(allocate_host_memory(count * element), 0, count, dtype);
}

void* Buffer::data() const {
  return memory_ ? static_cast<char*>(memory_->data()) + offset_bytes_ : nullptr;
}

MemoryKind Buffer::memory_kind() const { return memory_ ? memory_->kind() : MemoryKind::host; }

Buffer Buffer::slice(std::size_t first, std::size_t n) const {
  if (first > count_ || n > count_ - first) {
    throw InvalidArgument("Buffer::slice: elements " + range_text(first, n) +
                          " outside a buffer of " + std::to_string(count_) + " elements");
  }
  return Buffer(memory_, offset_bytes_ + first * size_of(dtype_), n, dtype_);
}

void Buffer::copy_from_host(const void* host, std::size_t bytes) {
  if (!memory_) throw InvalidArgument("Buffer::copy_from_host: empty buffer");
  check_host_pointer(host, bytes, "Buffer::copy_from_host");
  if (bytes > this->bytes()) {
    throw InvalidArgument("Buffer::copy_from_host: " + std::to_string(bytes) + " bytes into a " +
                          std::to_string(this->bytes()) + "-byte buffer");
  }
  memory_->copy_in(offset_bytes_, host, bytes);
}

void Buffer::copy_from(const Buffer& src) {
  if (!memory_ || !src.memory_) throw InvalidArgument("Buffer::copy_from: empty buffer");
  if (src.dtype_ != dtype_) {
    throw InvalidArgument("Buffer::copy_from: source is " + std::string(name(src.dtype_)) +
                          ", destination is " + std::string(name(dtype_)));
  }
  memory_->copy_from(offset_bytes_, *src.memory_, src.offset_bytes_,
                     std::min(bytes(), src.bytes()));
}

void Buffer::copy_to_host(void* host, std::size_t bytes) const {
  if (!memory_) throw InvalidArgument("Buffer::copy_to_host: empty buffer");
  check_host_pointer(host, bytes, "Buffer::copy_to_host");
  if (bytes > this->bytes()) {
    throw InvalidArgument("Buffer::copy_to_host: " + std::to_string(bytes) + " bytes from a " +
                          std::to_string(this->bytes()) + "-byte buffer");
  }
  memory_->copy_out(offset_bytes_, host, bytes);
}

void Buffer::check_element_size(std::size_t element_bytes) const {
  if (element_bytes != size_of(dtype_)) {
    throw InvalidArgument("Buffer of " + std::string(name(dtype_)) + " (" +
                          std::to_string(size_of(dtype_)) + "-byte elements) accessed as " +
                          std::to_string(element_bytes) + "-byte elements");
  }
}

void Buffer::check_host() const {
  if (memory_kind() != MemoryKind::host) {
    throw InvalidArgument(
        "Buffer::host_span: the buffer is device memory; use copy_to_host/to_host");
  }
  if (memory_ && memory_->host_view_refused()) {
    throw InvalidArgument(
        "Buffer::host_span: refused under TWINCCL_CHECK=2 because Communicator::alloc returns GPU "
        "memory on NCCL, where this call fails; use to_host/copy_to_host and "
        "fill_from_host/copy_from_host, which work on both backends");
  }
}

std::string Buffer::size_mismatch(std::size_t given) const {
  return "Buffer::fill_from_host: " + std::to_string(given) + " values for a buffer of " +
         std::to_string(count_);
}

}  // namespace twinccl
