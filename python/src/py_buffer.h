// NumPy arrays and CPU torch tensors as TwinCCL Buffers, zero-copy: the Buffer's memory is the
// array's or the tensor's. A tensor is taken as it is (data_ptr, nbytes), never through
// Tensor.numpy(), which makes its storage unresizable for good (FSDP frees an all-gather's output
// with resize_(0): "Trying to resize storage that is not resizable").
//
//   Buffer b = array_buffer(array, "float32", /*writable=*/true, "all_reduce's tensor");
//
// The Buffer keeps the array alive until the last copy of it is dropped (an asynchronous call
// holds its buffers until it completed, whoever drops the Work). The reference is given back to
// Python later, under the GIL, by release_dropped_arrays(): a Buffer may be dropped on an
// emulator thread that must not wait for the GIL.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "twinccl/buffer.h"

namespace twinccl::python {

// `dtype` is a TwinCCL type name ("float32", "bfloat16", ...): the array's bytes are read as that
// type (a bfloat16 torch tensor arrives as an int16 view). Throws InvalidArgument naming `what`
// when the array is not C-contiguous, not writable where written, or its byte size is not a
// multiple of the element size. Needs the GIL.
Buffer array_buffer(const pybind11::array& array, const std::string& dtype, bool writable,
                    const std::string& what);

// An array as above, or a CPU torch tensor that twinccl/_tensors.py's array() checked (device,
// layout, contiguous, type): its memory as it is (data_ptr, nbytes), kept alive the same way.
Buffer array_or_tensor_buffer(const pybind11::object& t, const std::string& dtype, bool writable,
                              const std::string& what);

// Host memory the binding copies a list of arrays through (gather/scatter's lists): out of
// memory is a ResourceError naming `what`, the rank and the bytes, not std::bad_alloc.
Buffer host_staging(std::size_t count, DataType dtype, const std::string& what, int rank);

// Drops the Python references of Buffers released since the last call. Needs the GIL.
void release_dropped_arrays();

}  // namespace twinccl::python
