// MindSpore comm_func's shapes (mindspore_style.h: a new stacked output and a handle) and
// torch.cuda.comm.scatter's chunks (chunk_scatter.h) on Comm. The outputs are Buffers the library
// allocated, handed to Python as NumPy arrays over the same memory (no copy).
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "call_site.h"
#include "py_buffer.h"
#include "py_comm.h"
#include "rank_baton.h"
#include "twinccl/chunk_scatter.h"
#include "twinccl/errors.h"
#include "twinccl/mindspore_style.h"

namespace py = pybind11;

namespace twinccl::python {
namespace {

namespace ms = mindspore_style;

// The NumPy type holding a TwinCCL type's bytes (bfloat16 and fp8 as their integer bits).
py::dtype numpy_type(DataType t) {
  switch (t) {
    case DataType::int8:
      return py::dtype::of<std::int8_t>();
    case DataType::uint8:
      return py::dtype::of<std::uint8_t>();
    case DataType::int32:
      return py::dtype::of<std::int32_t>();
    case DataType::uint32:
      return py::dtype::of<std::uint32_t>();
    case DataType::int64:
      return py::dtype::of<std::int64_t>();
    case DataType::uint64:
      return py::dtype::of<std::uint64_t>();
    case DataType::float16:
      return py::dtype("float16");
    case DataType::bfloat16:
      return py::dtype::of<std::int16_t>();
    case DataType::float32:
      return py::dtype::of<float>();
    case DataType::float64:
      return py::dtype::of<double>();
    case DataType::float8_e4m3:
    case DataType::float8_e5m2:
      return py::dtype::of<std::uint8_t>();
  }
  throw InvalidArgument("no NumPy type for " + std::string(name(t)));
}

// A 1-D array over `b`'s memory; the array keeps the Buffer (and so the memory) alive.
py::array numpy_view(const Buffer& b) {
  auto* keep = new Buffer(b);
  py::capsule owner(keep, [](void* p) { delete static_cast<Buffer*>(p); });
  return py::array(numpy_type(b.dtype()), {static_cast<py::ssize_t>(b.count())}, {}, b.data(),
                   owner);
}

ReduceOp reduce_op(const std::string& kind, double scalar) {
  const ReduceKind k = parse_reduce_kind(kind);
  return k == ReduceKind::premul_sum ? ReduceOp::premul_sum(scalar) : ReduceOp{k, 1.0};
}

// (output array, Work or None), issuing with the GIL released.
py::tuple result(bool async_op, const std::function<ms::Result()>& call) {
  release_dropped_arrays();
  ms::Result r;
  {
    BlockingCall nogil;  // gives up the rank baton too (rank_baton.h)
    r = call();
    if (!async_op) r.handle.wait();
  }
  py::object handle = py::none();
  if (async_op) handle = py::cast(std::make_unique<PyWork>(r.handle));
  return py::make_tuple(numpy_view(r.output), handle);
}

}  // namespace

void bind_mindspore(py::class_<Comm>& comm) {
  comm.def("ms_all_gather_into_tensor", [](const Comm& c, const py::array& t,
                                           const std::string& dtype, bool async_op,
                                           const std::string& file, unsigned line) {
    const Buffer b = array_buffer(t, dtype, false, "all_gather_into_tensor's tensor");
    const Where w = python_call_site(file, line);
    return result(async_op, [&] { return ms::all_gather_into_tensor(b, c.get(), async_op, w); });
  });
  comm.def("ms_reduce_scatter_tensor",
           [](const Comm& c, const py::array& t, const std::string& dtype, const std::string& op,
              double scalar, bool async_op, const std::string& file, unsigned line) {
             const Buffer b = array_buffer(t, dtype, false, "reduce_scatter_tensor's tensor");
             const ReduceOp r = reduce_op(op, scalar);
             const Where w = python_call_site(file, line);
             return result(async_op,
                           [&] { return ms::reduce_scatter_tensor(b, r, c.get(), async_op, w); });
           });
  comm.def("ms_all_reduce",
           [](const Comm& c, const py::array& t, const std::string& dtype, const std::string& op,
              double scalar, bool async_op, const std::string& file, unsigned line) {
             const Buffer b = array_buffer(t, dtype, false, "all_reduce's tensor");
             const ReduceOp r = reduce_op(op, scalar);
             const Where w = python_call_site(file, line);
             return result(async_op, [&] { return ms::all_reduce(b, r, c.get(), async_op, w); });
           });
  // Rank r's chunk of `tensor` (read at `root`; every rank passes the full shape).
  comm.def("scatter_chunks",
           [](const Comm& c, const py::array& t, const std::string& dtype,
              const std::vector<std::size_t>& shape, const std::vector<std::size_t>& chunk_sizes,
              std::size_t dim, int root, const py::object& out, const std::string& file,
              unsigned line) -> py::object {
             const Buffer b = array_buffer(t, dtype, false, "scatter's tensor");
             const Buffer o =
                 out.is_none() ? Buffer()
                               : array_buffer(out.cast<py::array>(), dtype, true, "scatter's out");
             const Where w = python_call_site(file, line);
             release_dropped_arrays();
             Buffer mine;
             {
               BlockingCall nogil;  // gives up the rank baton too (rank_baton.h)
               mine = scatter_chunks(c.get(), b, parse_data_type(dtype), shape, chunk_sizes, dim,
                                     root, o, w);
             }
             if (!out.is_none()) return out;
             return numpy_view(mine);
           });
}

}  // namespace twinccl::python
