// The collectives on Comm, as twinccl.distributed calls them: arrays (zero-copy Buffers), the
// TwinCCL type name, torch's arguments (group ranks already), the Python caller's file:line.
// Each is one call of torch_style.h (or the Communicator) with the GIL released.
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "call_site.h"
#include "py_buffer.h"
#include "py_comm.h"
#include "twinccl/call_site_text.h"
#include "twinccl/errors.h"
#include "twinccl/torch_style.h"

namespace py = pybind11;

namespace twinccl::python {
namespace {

namespace td = torch_style;
using Arrays = std::vector<py::object>;

ReduceOp reduce_op(const std::string& kind, double scalar) {
  const ReduceKind k = parse_reduce_kind(kind);
  if (k == ReduceKind::premul_sum) return ReduceOp::premul_sum(scalar);
  return ReduceOp{k, 1.0};
}

std::vector<Buffer> buffers(const Arrays& arrays, const std::string& dtype, bool writable,
                            const std::string& what) {
  std::vector<Buffer> out;
  out.reserve(arrays.size());
  for (std::size_t i = 0; i < arrays.size(); ++i)
    out.push_back(
        array_or_tensor_buffer(arrays[i], dtype, writable, what + "[" + std::to_string(i) + "]"));
  return out;
}

Work work_of(const td::MaybeWork& w) { return w ? *w : Work(); }

// `list` must hold `n` tensors of `count` elements each (gather_list, scatter_list).
void check_list(const std::vector<Buffer>& list, int n, std::size_t count,
                const std::string& what) {
  if (list.size() != static_cast<std::size_t>(n))
    throw InvalidArgument(what + " has " + std::to_string(list.size()) +
                          " tensors, the group has " + std::to_string(n) + " ranks");
  for (std::size_t i = 0; i < list.size(); ++i)
    if (list[i].count() != count)
      throw InvalidArgument(what + "[" + std::to_string(i) + "] has " +
                            std::to_string(list[i].count()) + " elements, the tensor has " +
                            std::to_string(count));
}

// Element slices of `buffer` of the given sizes, in order (all_to_all_single's splits).
std::vector<Buffer> split(const Buffer& buffer, const std::vector<std::size_t>& sizes,
                          const std::string& what) {
  std::vector<Buffer> out;
  std::size_t first = 0;
  for (std::size_t s : sizes) {
    if (s > buffer.count() - first)
      throw InvalidArgument(what + ": the split sizes add up to more than its " +
                            std::to_string(buffer.count()) + " elements");
    out.push_back(buffer.slice(first, s));
    first += s;
  }
  if (first != buffer.count())
    throw InvalidArgument(what + ": the split sizes add up to " + std::to_string(first) +
                          " elements, it has " + std::to_string(buffer.count()));
  return out;
}

}  // namespace

void bind_collectives(py::class_<Comm>& comm) {
  comm.def("all_reduce",
           [](const Comm& c, const py::object& t, const std::string& dtype, const std::string& op,
              double scalar, bool async_op, const std::string& file, unsigned line) {
             const Buffer b = array_or_tensor_buffer(t, dtype, true, "all_reduce's tensor");
             const ReduceOp r = reduce_op(op, scalar);
             const Where w = python_call_site(file, line);
             return issue_queued(
                 async_op, [&] { return work_of(td::all_reduce(c.get(), b, r, async_op, w)); });
           });
  comm.def("broadcast", [](const Comm& c, const py::object& t, const std::string& dtype, int src,
                           bool async_op, const std::string& file, unsigned line) {
    const Buffer b = array_or_tensor_buffer(t, dtype, true, "broadcast's tensor");
    const Where w = python_call_site(file, line);
    return issue_queued(async_op,
                        [&] { return work_of(td::broadcast(c.get(), b, src, async_op, w)); });
  });
  comm.def("reduce", [](const Comm& c, const py::object& t, const std::string& dtype, int dst,
                        const std::string& op, double scalar, bool async_op,
                        const std::string& file, unsigned line) {
    const Buffer b = array_or_tensor_buffer(t, dtype, true, "reduce's tensor");
    const ReduceOp r = reduce_op(op, scalar);
    const Where w = python_call_site(file, line);
    return issue_queued(async_op,
                        [&] { return work_of(td::reduce(c.get(), b, dst, r, async_op, w)); });
  });
  comm.def("all_gather", [](const Comm& c, const Arrays& outs, const py::object& t,
                            const std::string& dtype, bool async_op, const std::string& file,
                            unsigned line) {
    const std::vector<Buffer> list = buffers(outs, dtype, true, "all_gather's tensor_list");
    const Buffer b = array_or_tensor_buffer(t, dtype, false, "all_gather's tensor");
    const Where w = python_call_site(file, line);
    return issue(async_op, [&] { return work_of(td::all_gather(c.get(), list, b, async_op, w)); });
  });
  comm.def("all_gather_into_tensor", [](const Comm& c, const py::object& out, const py::object& in,
                                        const std::string& dtype, bool async_op,
                                        const std::string& file, unsigned line) {
    const Buffer o =
        array_or_tensor_buffer(out, dtype, true, "all_gather_into_tensor's output_tensor");
    const Buffer i =
        array_or_tensor_buffer(in, dtype, false, "all_gather_into_tensor's input_tensor");
    const Where w = python_call_site(file, line);
    return issue_queued(
        async_op, [&] { return work_of(td::all_gather_into_tensor(c.get(), o, i, async_op, w)); });
  });
  comm.def("reduce_scatter", [](const Comm& c, const py::object& out, const Arrays& ins,
                                const std::string& dtype, const std::string& op, double scalar,
                                bool async_op, const std::string& file, unsigned line) {
    const Buffer o = array_or_tensor_buffer(out, dtype, true, "reduce_scatter's output");
    const std::vector<Buffer> list = buffers(ins, dtype, false, "reduce_scatter's input_list");
    const ReduceOp r = reduce_op(op, scalar);
    const Where w = python_call_site(file, line);
    return issue(async_op,
                 [&] { return work_of(td::reduce_scatter(c.get(), o, list, r, async_op, w)); });
  });
  comm.def(
      "reduce_scatter_tensor", [](const Comm& c, const py::object& out, const py::object& in,
                                  const std::string& dtype, const std::string& op, double scalar,
                                  bool async_op, const std::string& file, unsigned line) {
        const Buffer o = array_or_tensor_buffer(out, dtype, true, "reduce_scatter_tensor's output");
        const Buffer i = array_or_tensor_buffer(in, dtype, false, "reduce_scatter_tensor's input");
        const ReduceOp r = reduce_op(op, scalar);
        const Where w = python_call_site(file, line);
        return issue_queued(async_op, [&] {
          return work_of(td::reduce_scatter_tensor(c.get(), o, i, r, async_op, w));
        });
      });
  comm.def("all_to_all", [](const Comm& c, const Arrays& outs, const Arrays& ins,
                            const std::string& dtype, bool async_op, const std::string& file,
                            unsigned line) {
    const std::vector<Buffer> o = buffers(outs, dtype, true, "all_to_all's output_tensor_list");
    const std::vector<Buffer> i = buffers(ins, dtype, false, "all_to_all's input_tensor_list");
    const Where w = python_call_site(file, line);
    return issue(async_op, [&] { return work_of(td::all_to_all(c.get(), o, i, async_op, w)); });
  });
  // Split sizes in elements (twinccl.distributed multiplies torch's row counts by the row size).
  comm.def("all_to_all_single", [](const Comm& c, const py::object& out, const py::object& in,
                                   const std::vector<std::size_t>& out_splits,
                                   const std::vector<std::size_t>& in_splits,
                                   const std::string& dtype, bool async_op, const std::string& file,
                                   unsigned line) {
    const Buffer o = array_or_tensor_buffer(out, dtype, true, "all_to_all_single's output");
    const Buffer i = array_or_tensor_buffer(in, dtype, false, "all_to_all_single's input");
    const Where w = python_call_site(file, line);
    if (out_splits.empty() && in_splits.empty())
      return issue(async_op, [&] { return c.get().all_to_all(i, o, {.async_op = async_op}, w); });
    // the error names the call, the rank and its line, as the emulator's own checks do
    const std::string at = call_site_text("all_to_all_single", c.get().name(), c.get().rank(), w);
    const std::vector<Buffer> os = split(o, out_splits, at + ": its output");
    const std::vector<Buffer> is = split(i, in_splits, at + ": its input");
    return issue(async_op, [&] { return work_of(td::all_to_all(c.get(), os, is, async_op, w)); });
  });
  // gather/scatter with lists: one gather/scatter op through a staging buffer at the root.
  comm.def("gather", [](const Comm& c, const py::object& t, const Arrays& gather_list,
                        const std::string& dtype, int dst, bool async_op, const std::string& file,
                        unsigned line) {
    const Buffer b = array_or_tensor_buffer(t, dtype, false, "gather's tensor");
    std::vector<Buffer> list = buffers(gather_list, dtype, true, "gather's gather_list");
    const Where w = python_call_site(file, line);
    Communicator& g = c.get();
    const bool root = g.rank() == dst;
    if (root)
      check_list(list, g.size(), b.count(),
                 call_site_text("gather", g.name(), g.rank(), w) + ": gather_list");
    if (std::string shared = root ? td::entries_sharing_memory(list, "gather_list") : "";
        !shared.empty()) {  // the copies out of the staging buffer would overwrite each other
      std::string text = call_site_text("gather", g.name(), g.rank(), w) + ": " + shared;
      g.rejected(OpDesc{}, text);
      throw InvalidArgument(text);
    }
    const Buffer staging = host_staging(root ? b.count() * list.size() : 0, b.dtype(),
                                        "gather's gather_list", g.rank());
    auto finish = [list, staging, n = b.count()] {
      for (std::size_t r = 0; r < list.size(); ++r) {
        Buffer out = list[r];
        out.copy_from(staging.slice(r * n, n));
      }
    };
    return issue(
        async_op,
        [&] {
          return keep_alive(g.gather(b.data(), root ? staging.data() : nullptr, b.count(),
                                     b.dtype(), dst, {.async_op = async_op}, w),
                            std::make_shared<std::pair<Buffer, Buffer>>(b, staging));
        },
        finish);
  });
  comm.def("scatter", [](const Comm& c, const py::object& t, const Arrays& scatter_list,
                         const std::string& dtype, int src, bool async_op, const std::string& file,
                         unsigned line) {
    const Buffer b = array_or_tensor_buffer(t, dtype, true, "scatter's tensor");
    const std::vector<Buffer> list = buffers(scatter_list, dtype, false, "scatter's scatter_list");
    const Where w = python_call_site(file, line);
    Communicator& g = c.get();
    const bool root = g.rank() == src;
    if (root)
      check_list(list, g.size(), b.count(),
                 call_site_text("scatter", g.name(), g.rank(), w) + ": scatter_list");
    const Buffer staging = host_staging(root ? b.count() * list.size() : 0, b.dtype(),
                                        "scatter's scatter_list", g.rank());
    for (std::size_t r = 0; r < list.size(); ++r)
      staging.slice(r * b.count(), b.count()).copy_from(list[r]);
    return issue(async_op, [&] {
      return keep_alive(g.scatter(root ? staging.data() : nullptr, b.data(), b.count(), b.dtype(),
                                  src, {.async_op = async_op}, w),
                        std::make_shared<std::pair<Buffer, Buffer>>(b, staging));
    });
  });
  comm.def("send", [](const Comm& c, const py::object& t, const std::string& dtype, int peer,
                      bool async_op, const std::string& file, unsigned line) {
    const Buffer b = array_or_tensor_buffer(t, dtype, false, "send's tensor");
    const Where w = python_call_site(file, line);
    return issue(async_op, [&] { return c.get().send(b, peer, {.async_op = true}, w); });
  });
  comm.def("recv", [](const Comm& c, const py::object& t, const std::string& dtype, int peer,
                      bool async_op, const std::string& file, unsigned line) {
    const Buffer b = array_or_tensor_buffer(t, dtype, true, "recv's tensor");
    const Where w = python_call_site(file, line);
    return issue(async_op, [&] { return c.get().recv(b, peer, {.async_op = true}, w); });
  });
  // ops: (is_send, array, peer) in order; one group (dist.batch_isend_irecv).
  comm.def(
      "batch_isend_irecv", [](const Comm& c, const std::vector<py::tuple>& ops,
                              const std::string& dtype, const std::string& file, unsigned line) {
        std::vector<td::P2POp> list;
        for (std::size_t k = 0; k < ops.size(); ++k) {
          const bool is_send = ops[k][0].cast<bool>();
          const std::string what = "batch_isend_irecv's p2p_op_list[" + std::to_string(k) + "]";
          list.push_back({is_send ? td::P2POp::Kind::isend : td::P2POp::Kind::irecv,
                          array_or_tensor_buffer(ops[k][1], dtype, !is_send, what),
                          ops[k][2].cast<int>()});
        }
        const Where w = python_call_site(file, line);
        return issue(true, [&] { return work_of(td::batch_isend_irecv(c.get(), list, true, w)); });
      });
  comm.def("barrier", [](const Comm& c, bool async_op, const std::string& file, unsigned line) {
    const Where w = python_call_site(file, line);
    return issue(async_op, [&] { return c.get().barrier({.async_op = async_op}, w); });
  });
}

}  // namespace twinccl::python
