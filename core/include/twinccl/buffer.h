// Buffers: typed, reference-counted memory allocated through a communicator, so the same user
// code runs on host memory (emulator) and on GPU memory (NCCL backend).
//
//   twinccl::Buffer x = comm.alloc(1024, DataType::float32);
//   x.copy_from_host(values.data(), values.size() * sizeof(float));
//   std::vector<float> back = x.to_host<float>();
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "twinccl/data_type.h"
#include "twinccl/errors.h"

namespace twinccl {

enum class MemoryKind : std::uint8_t { host, device };

// One allocation. Backends derive from it to free and copy device memory.
class Memory {
 public:
  Memory(void* data, std::size_t bytes, MemoryKind kind)
      : data_(data), bytes_(bytes), kind_(kind) {}
  virtual ~Memory() = default;
  Memory(const Memory&) = delete;
  Memory& operator=(const Memory&) = delete;

  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }
  MemoryKind kind() const { return kind_; }
  // Host memory that stands for GPU memory (the emulator under TWINCCL_CHECK=2): host_span is
  // refused as on NCCL, so a program that reads buffers directly fails on the laptop, not on the
  // cluster. Copies are unaffected.
  bool host_view_refused() const { return host_view_refused_; }
  void refuse_host_view() { host_view_refused_ = true; }
  // Copies between this memory (at byte offset) and host memory.
  virtual void copy_in(std::size_t offset, const void* host, std::size_t bytes);
  virtual void copy_out(std::size_t offset, void* host, std::size_t bytes) const;
  // Copies from another allocation (host or the same backend's device memory). The default
  // handles host-to-host; backends with device memory override it.
  virtual void copy_from(std::size_t offset, const Memory& src, std::size_t src_offset,
                         std::size_t bytes);

 private:
  void* data_;
  std::size_t bytes_;
  MemoryKind kind_;
  bool host_view_refused_ = false;
};

// Plain host memory, zero-initialised, 64-byte aligned.
std::shared_ptr<Memory> allocate_host_memory(std::size_t bytes);

// The bytes of Communicator::alloc(count, dtype) on `comm` rank `rank`, checked before anything
// is allocated: InvalidArgument naming the call, communicator, rank and value for a data type
// outside the DataType enum (a value cast from an int) or a byte count that overflows size_t.
std::size_t alloc_bytes(std::string_view comm, int rank, std::size_t count, DataType dtype);

// A view of `count` elements of `dtype` inside a Memory. Copying a Buffer shares the memory
// (like a tensor handle); slice() makes a view of part of it.
class Buffer {
 public:
  Buffer() = default;
  Buffer(std::shared_ptr<Memory> memory, std::size_t offset_bytes, std::size_t count,
         DataType dtype);
  // Host buffer, zero-initialised: for tests and single-process helpers.
  static Buffer host(std::size_t count, DataType dtype);

  void* data() const;
  std::size_t count() const { return count_; }
  DataType dtype() const { return dtype_; }
  std::size_t bytes() const { return count_ * size_of(dtype_); }
  MemoryKind memory_kind() const;
  // The allocation this view shares (nullptr for an empty Buffer). An asynchronous call keeps it
  // alive until the operation completed, as torch keeps a tensor alive until its Work finished.
  const std::shared_ptr<Memory>& memory() const { return memory_; }
  bool empty() const { return count_ == 0; }
  explicit operator bool() const { return memory_ != nullptr; }

  // Elements [first, first + n). Throws InvalidArgument when out of range.
  Buffer slice(std::size_t first, std::size_t n) const;

  void copy_from_host(const void* host, std::size_t bytes);
  // Copies min(bytes(), src.bytes()) from src (any memory this backend can read). Types must match.
  void copy_from(const Buffer& src);
  void copy_to_host(void* host, std::size_t bytes) const;

  template <class T>
  std::vector<T> to_host() const {
    check_element_size(sizeof(T));
    std::vector<T> out(count_);
    copy_to_host(out.data(), bytes());
    return out;
  }
  template <class T>
  void fill_from_host(std::span<const T> values) {
    check_element_size(sizeof(T));
    if (values.size() != count_) throw InvalidArgument(size_mismatch(values.size()));
    copy_from_host(values.data(), bytes());
  }
  // Direct access for host memory only; throws InvalidArgument for device memory.
  template <class T>
  std::span<T> host_span() const {
    check_element_size(sizeof(T));
    check_host();
    return {static_cast<T*>(data()), count_};
  }

 private:
  void check_element_size(std::size_t element_bytes) const;
  void check_host() const;
  std::string size_mismatch(std::size_t given) const;

  std::shared_ptr<Memory> memory_;
  std::size_t offset_bytes_ = 0;
  std::size_t count_ = 0;
  DataType dtype_ = DataType::float32;
};

}  // namespace twinccl
