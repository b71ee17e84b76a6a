// py_buffer.h: a Memory over an array's bytes that owns a reference to the array.
#include "py_buffer.h"

#include <cstdint>
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

Buffer array_or_tensor_buffer(const py::object& t, const std::string& dtype, bool writable,
                              const std::string& what) {
  if (py::isinstance<py::array>(t))
    return array_buffer(py::reinterpret_borrow<py::array>(t), dtype, writable, what);
  // Interned names, looked up without building a string per call.
  static PyObject* const data_ptr = PyUnicode_InternFromString("data_ptr");
  static PyObject* const nbytes = PyUnicode_InternFromString("nbytes");
  const DataType type = parse_data_type(dtype);
  const std::size_t element = size_of(type);
  auto address_object =
      py::reinterpret_steal<py::object>(PyObject_CallMethodNoArgs(t.ptr(), data_ptr));
  auto bytes_object = py::reinterpret_steal<py::object>(
      address_object ? PyObject_GetAttr(t.ptr(), nbytes) : nullptr);
  if (!bytes_object) {
    if (!PyErr_ExceptionMatches(PyExc_AttributeError)) throw py::error_already_set();
    PyErr_Clear();
    throw InvalidArgument(what + ": expected a NumPy array or a CPU torch tensor");
  }
  const auto address = address_object.cast<std::uintptr_t>();
  const auto bytes = bytes_object.cast<std::size_t>();
  if (bytes % element != 0 || (address == 0 && bytes != 0))
    throw InvalidArgument(what + ": " + std::to_string(bytes) + " bytes at " +
                          std::to_string(address) + " are not whole " + dtype + " elements");
  PyObject* owner = t.ptr();
  Py_INCREF(owner);
  auto memory = std::make_shared<ArrayMemory>(reinterpret_cast<void*>(address), bytes, owner);
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
