// py_buffer.h: a Memory over an array's bytes that owns a reference to the array.
#include "py_buffer.h"

#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "twinccl/data_type.h"
#include "twinccl/errors.h"

namespace py = pybind11;

namespace twinccl::python {
namespace {

// References whose Buffers were dropped, waiting for a thread holding the GIL.
struct DroppedArrays {
  std::mutex mu;
  std::vector<PyObject*> objects;
};

DroppedArrays& dropped() {
  static DroppedArrays* d = new DroppedArrays;  // outlives every Buffer
  return *d;
}

class ArrayMemory final : public Memory {
 public:
  ArrayMemory(void* data, std::size_t bytes, PyObject* owner)
      : Memory(data, bytes, MemoryKind::host), owner_(owner) {}
  ~ArrayMemory() override {
    DroppedArrays& d = dropped();
    std::lock_guard<std::mutex> lock(d.mu);
    d.objects.push_back(owner_);  // no GIL here: released by release_dropped_arrays()
  }

 private:
  PyObject* owner_;  // a new reference
};

}  // namespace

Buffer array_buffer(const py::array& array, const std::string& dtype, bool writable,
                    const std::string& what) {
  const DataType type = parse_data_type(dtype);
  const std::size_t element = size_of(type);
  if (!(array.flags() & py::array::c_style))
    throw InvalidArgument(what + ": the tensor must be contiguous (as torch.distributed requires)");
  if (writable && !array.writeable())
    throw InvalidArgument(what + ": the tensor is read-only but this call writes it");
  const auto bytes = static_cast<std::size_t>(array.nbytes());
  if (bytes % element != 0)
    throw InvalidArgument(what + ": " + std::to_string(bytes) +
                          " bytes are not a whole number of " + dtype + " elements");
  // data() of a read-only array is const: the library only reads inputs.
  void* data = const_cast<void*>(array.data());
  PyObject* owner = array.ptr();
  Py_INCREF(owner);
  auto memory = std::make_shared<ArrayMemory>(data, bytes, owner);
  return Buffer(std::move(memory), 0, bytes / element, type);
}

void release_dropped_arrays() {
  std::vector<PyObject*> objects;
  {
    DroppedArrays& d = dropped();
    std::lock_guard<std::mutex> lock(d.mu);
    objects.swap(d.objects);
  }
  for (PyObject* o : objects) Py_DECREF(o);
}

Buffer host_staging(std::size_t count, DataType dtype, const std::string& what, int rank) {
  try {
    return Buffer::host(count, dtype);
  } catch (const std::bad_alloc&) {
    throw ResourceError(what + " on rank " + std::to_string(rank) + ": could not allocate " +
                        std::to_string(count * size_of(dtype)) +
                        " bytes of host staging memory: out of memory (std::bad_alloc; the "
                        "process's memory or its address-space limit, ulimit -v, is exhausted)");
  }
}

}  // namespace twinccl::python
