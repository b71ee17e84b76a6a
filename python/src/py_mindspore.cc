// MindSpore comm_func's shapes (mindspore_style.h: a new stacked output and a handle), the uneven
// collectives of MindSpore's mint.distributed and comm_func (all_gather_v, reduce_scatter_v,
// all_to_all_v) and torch.cuda.comm.scatter's chunks (chunk_scatter.h) on Comm. The outputs are
// Buffers the library allocated, handed to Python as NumPy arrays over the same memory (no copy).
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

// The NumPy type holding a TwinCCL type's bytes: NumPy's of the same name; bfloat16 and fp8 (which
// NumPy lacks) as their integer bits.
py::dtype numpy_type(DataType t) {
  if (t == DataType::bfloat16) return py::dtype("int16");
  if (t == DataType::float8_e4m3 || t == DataType::float8_e5m2) return py::dtype("uint8");
  return py::dtype(std::string(name(t)));
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

// The `_v` collective's Work keeps its Buffers (and so the arrays) until it is dropped: the raw
// pointer calls do not hold them themselves.
py::object issue_v(bool async_op, std::vector<Buffer> keep, const std::function<Work()>& call) {
  auto held = std::make_shared<std::vector<Buffer>>(std::move(keep));
  return issue(async_op, [&] { return keep_alive(call(), held); });
}

using Counts = std::vector<std::size_t>;

// The raw-pointer calls cannot see the arrays' sizes: `b` must hold exactly `expected` elements.
void check_count(const Buffer& b, std::size_t expected, const std::string& what) {
  if (b.count() != expected)
    throw InvalidArgument(what + " has " + std::to_string(b.count()) +
                          " elements, the split sizes need " + std::to_string(expected));
}

std::size_t total(const Counts& counts) {
  std::size_t sum = 0;
  for (std::size_t n : counts) sum += n;
  return sum;
}

// counts[rank] of a per-rank vector (its size is checked by the collective itself).
std::size_t mine(const Comm& c, const Counts& counts) {
  const auto r = static_cast<std::size_t>(c.get().rank());
  return r < counts.size() ? counts[r] : 0;
}

void bind_uneven(py::class_<Comm>& comm) {
  // recv_counts[r]: elements from rank r, packed in rank order in `out`.
  comm.def("all_gather_v", [](const Comm& c, const py::array& out, const py::array& in,
                              const Counts& recv_counts, const std::string& dtype, bool async_op,
                              const std::string& file, unsigned line) {
    const Buffer o = array_buffer(out, dtype, true, "all_gather_into_tensor_uneven's output");
    const Buffer i = array_buffer(in, dtype, false, "all_gather_into_tensor_uneven's input");
    check_count(o, total(recv_counts), "all_gather_into_tensor_uneven's output");
    check_count(i, mine(c, recv_counts), "all_gather_into_tensor_uneven's input");
    const Where w = python_call_site(file, line);
    return issue_v(async_op, {o, i}, [&] {
      return c.get().all_gather_v(i.data(), o.data(), recv_counts, {}, o.dtype(),
                                  {.async_op = true}, w);
    });
  });
  // recv_counts[r]: elements rank r receives, read packed in rank order from `in`.
  comm.def("reduce_scatter_v", [](const Comm& c, const py::array& out, const py::array& in,
                                  const Counts& recv_counts, const std::string& dtype,
                                  const std::string& op, double scalar, bool async_op,
                                  const std::string& file, unsigned line) {
    const Buffer o = array_buffer(out, dtype, true, "reduce_scatter_tensor_uneven's output");
    const Buffer i = array_buffer(in, dtype, false, "reduce_scatter_tensor_uneven's input");
    const ReduceOp r = reduce_op(op, scalar);
    check_count(o, mine(c, recv_counts), "reduce_scatter_tensor_uneven's output");
    check_count(i, total(recv_counts), "reduce_scatter_tensor_uneven's input");
    const Where w = python_call_site(file, line);
    return issue_v(async_op, {o, i}, [&] {
      return c.get().reduce_scatter_v(i.data(), o.data(), recv_counts, {}, o.dtype(), r,
                                      {.async_op = true}, w);
    });
  });
  // send_counts[p] elements to rank p, recv_counts[p] from it, packed in rank order.
  comm.def("all_to_all_v",
           [](const Comm& c, const py::array& out, const py::array& in, const Counts& send_counts,
              const Counts& recv_counts, const std::string& dtype, bool async_op,
              const std::string& file, unsigned line) {
             const Buffer o = array_buffer(out, dtype, true, "all_to_all's output");
             const Buffer i = array_buffer(in, dtype, false, "all_to_all's input");
             check_count(o, total(recv_counts), "all_to_all's output");
             check_count(i, total(send_counts), "all_to_all's input");
             const Where w = python_call_site(file, line);
             return issue_v(async_op, {o, i}, [&] {
               return c.get().all_to_all_v(i.data(), send_counts, {}, o.data(), recv_counts, {},
                                           o.dtype(), {.async_op = true}, w);
             });
           });
}

}  // namespace

void bind_mindspore(py::class_<Comm>& comm) {
  bind_uneven(comm);
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
           [](const Comm& c, const py::object& t, const std::string& dtype,
              const std::vector<std::size_t>& shape, const std::vector<std::size_t>& chunk_sizes,
              std::size_t dim, int root, const py::object& out, const std::string& file,
              unsigned line) -> py::object {
             const Buffer b = array_or_tensor_buffer(t, dtype, false, "scatter's tensor");
             const Buffer o = out.is_none()
                                  ? Buffer()
                                  : array_or_tensor_buffer(out, dtype, true, "scatter's out");
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
