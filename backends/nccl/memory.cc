// Device memory (see memory.h).
//
// How it works: cudaMalloc on the communicator's GPU, cudaMemsetAsync to zero (host buffers are
// zero-initialised too, so user code behaves the same on both backends). copy_in/copy_out are
// cudaMemcpyAsync on the communicator's stream followed by a stream synchronize: they wait for
// the collectives issued before them and nothing issued later can overtake them. copy_from
// (Buffer::copy_from, used by the torch-style list calls) copies device to device the same way.
#include "nccl/memory.h"

#include <string>

#include "nccl/check.h"
#include "twinccl/errors.h"

namespace twinccl::nccl {
namespace {

class DeviceMemory final : public Memory {
 public:
  DeviceMemory(void* data, std::size_t bytes, std::shared_ptr<StreamContext> stream)
      : Memory(data, bytes, MemoryKind::device), stream_(std::move(stream)) {}

  ~DeviceMemory() override {
    if (data() == nullptr) return;
    int previous = -1;
    (void)cudaGetDevice(&previous);
    (void)cudaSetDevice(stream_->device());
    (void)cudaStreamSynchronize(stream_->stream());  // no collective may still use it
    (void)cudaFree(data());
    if (previous >= 0) (void)cudaSetDevice(previous);
  }

  void copy_in(std::size_t offset, const void* host, std::size_t bytes) override {
    check_range("copy_in", offset, bytes);
    if (bytes == 0) return;
    copy(static_cast<char*>(data()) + offset, host, bytes, cudaMemcpyHostToDevice, "copy_in");
  }

  void copy_out(std::size_t offset, void* host, std::size_t bytes) const override {
    check_range("copy_out", offset, bytes);
    if (bytes == 0) return;
    copy(host, static_cast<const char*>(data()) + offset, bytes, cudaMemcpyDeviceToHost, "copy_out");
  }

  // Device-to-device (or host-to-device) on this memory's stream; cudaMemcpyDefault lets the
  // driver pick the direction from the pointers (unified addressing), peers included.
  void copy_from(std::size_t offset, const Memory& src, std::size_t src_offset, std::size_t bytes) override {
    check_range("copy_from", offset, bytes);
    if (src_offset + bytes > src.bytes() || src_offset + bytes < src_offset) {
      throw InvalidArgument("device Memory::copy_from: source range outside its " + std::to_string(src.bytes()) +
                            "-byte allocation");
    }
    if (bytes == 0) return;
    copy(static_cast<char*>(data()) + offset, static_cast<const char*>(src.data()) + src_offset, bytes,
         cudaMemcpyDefault, "copy_from");
  }

 private:
  void check_range(const char* what, std::size_t offset, std::size_t bytes) const {
    if (offset + bytes > this->bytes() || offset + bytes < offset) {
      throw InvalidArgument(std::string("device Memory::") + what + ": range [" + std::to_string(offset) + ", " +
                            std::to_string(offset + bytes) + ") is outside the " + std::to_string(this->bytes()) +
                            "-byte allocation on GPU " + std::to_string(stream_->device()));
    }
  }

  void copy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind, const char* what) const {
    DeviceGuard guard(stream_->device());
    const std::string where = std::string("device Memory::") + what + " of " + std::to_string(bytes) +
                              " bytes on GPU " + std::to_string(stream_->device());
    check_cuda(cudaMemcpyAsync(dst, src, bytes, kind, stream_->stream()), where);
    check_cuda(cudaStreamSynchronize(stream_->stream()), where);
  }

  std::shared_ptr<StreamContext> stream_;
};

}  // namespace

std::shared_ptr<Memory> allocate_device_memory(std::shared_ptr<StreamContext> stream, std::size_t bytes) {
  if (bytes == 0) return std::make_shared<DeviceMemory>(nullptr, 0, std::move(stream));
  DeviceGuard guard(stream->device());
  void* data = nullptr;
  check_cuda(cudaMalloc(&data, bytes),
             "cudaMalloc of " + std::to_string(bytes) + " bytes on GPU " + std::to_string(stream->device()));
  auto memory = std::make_shared<DeviceMemory>(data, bytes, stream);
  check_cuda(cudaMemsetAsync(data, 0, bytes, stream->stream()), "cudaMemsetAsync of a new buffer");
  check_cuda(cudaStreamSynchronize(stream->stream()), "zero-filling a new buffer");
  return memory;
}

}  // namespace twinccl::nccl
