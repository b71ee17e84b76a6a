// Device memory (see memory.h).
//
// How it works: cudaMalloc on the communicator's GPU, cudaMemsetAsync to zero (host buffers are
// zero-initialised too, so user code behaves the same on both backends). copy_in/copy_out are
// cudaMemcpyAsync on the communicator's stream between two polls of the stream (cudaStreamQuery)
// until it drained, bounded by the timeout and the run's abort signal (never cudaStreamSynchronize;
// the first poll because a copy with pageable host memory may itself wait for the stream):
// they wait for the collectives issued before them and nothing issued later can overtake them.
// copy_from (Buffer::copy_from, used by the torch-style list calls) copies device to device the
// same way. Freeing waits the same bounded way; a buffer freed while an exception unwinds with
// work still queued raises the run's abort signal first (StreamContext::fail_fast), and memory a
// stream may still use is leaked rather than freed under a running kernel.
#include "nccl/memory.h"

#include <exception>
#include <string>

#include "nccl/check.h"
#include "twinccl/errors.h"

namespace twinccl::nccl {
namespace {

// Bounded wait for a copy: TimeoutError (or AbortedError) instead of blocking forever.
void wait_done(StreamContext& stream, const std::string& what) {
  const auto result = stream.drain(what);
  if (result == StreamContext::Drain::idle) return;
  if (result == StreamContext::Drain::aborted) {
    throw AbortedError(
        what + ": the communicator was aborted (a rank failed) before the copy could be trusted");
  }
  throw TimeoutError(
      what +
      ": the communicator's stream did not drain within TWINCCL_TIMEOUT_S: an earlier "
      "collective never finished");
}

}  // namespace

void copy_on_stream(StreamContext& stream, void* dst, const void* src, std::size_t bytes,
                    cudaMemcpyKind kind, const std::string& what) {
  DeviceGuard guard(stream.device());
  const std::string where =
      what + " of " + std::to_string(bytes) + " bytes on GPU " + std::to_string(stream.device());
  // CUDA's API synchronization rules: an "Async" copy to or from pageable host memory may
  // synchronize with the stream before it starts, an unbounded host wait behind a collective
  // that never ends. So the stream is drained first (bounded), and the copy waits for nothing.
  wait_done(stream, where + " (waiting for earlier work on the stream)");
  check_cuda(api().cudaMemcpyAsync(dst, src, bytes, kind, stream.stream()), where);
  wait_done(stream, where);
}

namespace {

class DeviceMemory final : public Memory {
 public:
  DeviceMemory(void* data, std::size_t bytes, std::shared_ptr<StreamContext> stream)
      : Memory(data, bytes, MemoryKind::device), stream_(std::move(stream)) {}

  ~DeviceMemory() override {
    if (data() == nullptr) return;
    int previous = -1;
    (void)api().cudaGetDevice(&previous);
    (void)api().cudaSetDevice(stream_->device());
    const std::string what =
        "freeing " + std::to_string(bytes()) + " bytes on GPU " + std::to_string(stream_->device());
    if (std::uncaught_exceptions() > 0 &&
        api().cudaStreamQuery(stream_->stream()) == cudaErrorNotReady) {
      stream_->fail_fast("a rank failed with work still queued on GPU " +
                         std::to_string(stream_->device()) +
                         " (a buffer was released while an exception unwound)");
    }
    // No collective may still use it: wait (bounded) for the stream; an abort ends NCCL's work.
    auto drained = StreamContext::Drain::timed_out;
    try {
      drained = stream_->drain(what);
    } catch (const std::exception&) {
    }
    if (drained != StreamContext::Drain::timed_out)
      (void)api().cudaFree(data());  // else leaked, not freed in use
    if (previous >= 0) (void)api().cudaSetDevice(previous);
  }

  void copy_in(std::size_t offset, const void* host, std::size_t bytes) override {
    check_range("copy_in", offset, bytes);
    if (bytes == 0) return;
    copy(static_cast<char*>(data()) + offset, host, bytes, cudaMemcpyHostToDevice, "copy_in");
  }

  void copy_out(std::size_t offset, void* host, std::size_t bytes) const override {
    check_range("copy_out", offset, bytes);
    if (bytes == 0) return;
    copy(host, static_cast<const char*>(data()) + offset, bytes, cudaMemcpyDeviceToHost,
         "copy_out");
  }

  // Device-to-device (or host-to-device) on this memory's stream; cudaMemcpyDefault lets the
  // driver pick the direction from the pointers (unified addressing), peers included.
  void copy_from(std::size_t offset, const Memory& src, std::size_t src_offset,
                 std::size_t bytes) override {
    check_range("copy_from", offset, bytes);
    if (src_offset + bytes > src.bytes() || src_offset + bytes < src_offset) {
      throw InvalidArgument("device Memory::copy_from: source range outside its " +
                            std::to_string(src.bytes()) + "-byte allocation");
    }
    if (bytes == 0) return;
    copy(static_cast<char*>(data()) + offset, static_cast<const char*>(src.data()) + src_offset,
         bytes, cudaMemcpyDefault, "copy_from");
  }

 private:
  void check_range(const char* what, std::size_t offset, std::size_t bytes) const {
    if (offset + bytes > this->bytes() || offset + bytes < offset) {
      throw InvalidArgument(std::string("device Memory::") + what + ": range [" +
                            std::to_string(offset) + ", " + std::to_string(offset + bytes) +
                            ") is outside the " + std::to_string(this->bytes()) +
                            "-byte allocation on GPU " + std::to_string(stream_->device()));
    }
  }

  void copy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind,
            const char* what) const {
    copy_on_stream(*stream_, dst, src, bytes, kind, std::string("device Memory::") + what);
  }

  std::shared_ptr<StreamContext> stream_;
};

}  // namespace

std::shared_ptr<Memory> allocate_device_memory(std::shared_ptr<StreamContext> stream,
                                               std::size_t bytes) {
  if (bytes == 0) return std::make_shared<DeviceMemory>(nullptr, 0, std::move(stream));
  DeviceGuard guard(stream->device());
  void* data = nullptr;
  check_cuda(api().cudaMalloc(&data, bytes), "cudaMalloc of " + std::to_string(bytes) +
                                                 " bytes on GPU " +
                                                 std::to_string(stream->device()));
  auto memory = std::make_shared<DeviceMemory>(data, bytes, stream);
  check_cuda(api().cudaMemsetAsync(data, 0, bytes, stream->stream()),
             "cudaMemsetAsync of a new buffer");
  wait_done(*stream, "zero-filling a new buffer of " + std::to_string(bytes) + " bytes");
  return memory;
}

}  // namespace twinccl::nccl
