#include "conformance_cases.h"

#include <cstring>
#include <stdexcept>

#include "twinccl/reduce_kernels.h"

namespace twinccl::testing {
namespace {

// The part of rank's output the case compares, and where the rank's input sits for in-place.
struct Layout {
  std::size_t recv_elems;   // whole recv (or shared) buffer
  std::size_t send_elems;
  std::size_t input_at;     // in place: input's element offset inside the shared buffer
  std::size_t result_at;    // compared region's offset inside recv
  std::size_t result_elems;
};

Layout layout(const Case& c, int rank, int n) {
  auto un = static_cast<std::size_t>(n);
  auto r = static_cast<std::size_t>(rank);
  std::size_t k = c.count;
  switch (c.kind) {
    case OpKind::all_reduce: return {k, k, 0, 0, k};
    case OpKind::reduce_scatter: return {k, un * k, r * k, 0, k};
    case OpKind::all_gather: return {un * k, k, r * k, 0, un * k};
    case OpKind::broadcast: return {k, rank == c.root ? k : 0, 0, 0, k};
    case OpKind::reduce: return {rank == c.root ? k : 0, k, 0, 0, rank == c.root ? k : 0};
    case OpKind::all_to_all: return {un * k, un * k, 0, 0, un * k};
    case OpKind::gather: return {rank == c.root ? un * k : 0, k, r * k, 0, rank == c.root ? un * k : 0};
    case OpKind::scatter: return {k, rank == c.root ? un * k : 0, r * k, 0, k};
    default: throw std::logic_error("case kind not in the sweep");
  }
}

double scalar_for(DataType dtype, int rank) {
  if (!is_floating(dtype)) return rank % 3 + 1;
  return 0.5 * (rank % 3 + 1);
}

}  // namespace

std::string Case::describe() const {
  return std::string(name(kind)) + " " + std::string(name(dtype)) + " " + std::string(twinccl::name(op)) +
         " count=" + std::to_string(count) + " root=" + std::to_string(root) + (in_place ? " in-place" : " out-of-place");
}

Case make_case(OpKind kind, DataType dtype, ReduceKind op, std::size_t count, int root, bool in_place, int nranks,
               unsigned salt) {
  Case c{kind, dtype, op, count, root, in_place, salt, {}, {}, {}};
  std::size_t e = size_of(dtype);
  for (int r = 0; r < nranks; ++r) {
    Layout l = layout(c, r, nranks);
    c.inputs.push_back(make_input(dtype, op, r, l.send_elems, salt));
    c.ops.push_back(op == ReduceKind::premul_sum ? ReduceOp::premul_sum(scalar_for(dtype, r)) : ReduceOp{op, 1.0});
  }
  // Reference inputs: a non-root's send is unused for broadcast/scatter; pad so indexing works.
  std::vector<Bytes> ref_inputs = c.inputs;
  OpDesc call;
  call.kind = kind;
  call.dtype = dtype;
  call.count = count;
  call.root = root;
  call.op = c.ops[0];
  for (int r = 0; r < nranks; ++r) {
    Layout l = layout(c, r, nranks);
    Bytes before(l.recv_elems * e, 0);
    Bytes out = reference_output(call, ref_inputs, c.ops, r, before);
    c.expected.emplace_back(out.begin() + static_cast<std::ptrdiff_t>(l.result_at * e),
                            out.begin() + static_cast<std::ptrdiff_t>((l.result_at + l.result_elems) * e));
  }
  return c;
}

void run_case(Communicator& comm, const Case& c, std::string_view algorithm) {
  int r = comm.rank(), n = comm.size();
  Layout l = layout(c, r, n);
  std::size_t e = size_of(c.dtype);
  const Bytes& input = c.inputs[static_cast<std::size_t>(r)];
  CallOptions opts{false, algorithm};
  Buffer recv = comm.alloc(std::max(l.recv_elems, c.in_place ? l.send_elems : 0), c.dtype);
  Buffer send = comm.alloc(l.send_elems, c.dtype);
  const void* sendp = send.data();
  void* recvp = recv.data();
  bool in_place = c.in_place;
  if (in_place) {
    // NCCL's in-place layouts: the input lives inside the shared buffer.
    switch (c.kind) {
      case OpKind::reduce_scatter:
      case OpKind::scatter:  // recv == send + rank*count: the big buffer is the send buffer
        if (c.kind == OpKind::scatter && r != c.root) { in_place = false; break; }
        std::memcpy(recv.data(), input.data(), input.size());
        sendp = recv.data();
        recvp = static_cast<char*>(recv.data()) + l.input_at * e;
        break;
      case OpKind::all_gather:
      case OpKind::gather:
        if (c.kind == OpKind::gather && r != c.root) { in_place = false; break; }
        std::memcpy(static_cast<char*>(recv.data()) + l.input_at * e, input.data(), input.size());
        sendp = static_cast<char*>(recv.data()) + l.input_at * e;
        break;
      default:  // all_reduce, broadcast, reduce: send == recv
        if (input.size() > recv.bytes()) { in_place = false; break; }
        if (!input.empty()) std::memcpy(recv.data(), input.data(), input.size());
        sendp = recv.data();
        break;
    }
  }
  if (!in_place && !input.empty()) std::memcpy(send.data(), input.data(), input.size());
  if (l.send_elems == 0) sendp = nullptr;
  if (l.recv_elems == 0 && !c.in_place) recvp = nullptr;
  const ReduceOp& op = c.ops[static_cast<std::size_t>(r)];
  switch (c.kind) {
    case OpKind::all_reduce: comm.all_reduce(sendp, recvp, c.count, c.dtype, op, opts); break;
    case OpKind::reduce_scatter: comm.reduce_scatter(sendp, recvp, c.count, c.dtype, op, opts); break;
    case OpKind::all_gather: comm.all_gather(sendp, recvp, c.count, c.dtype, opts); break;
    case OpKind::broadcast: comm.broadcast(sendp, recvp, c.count, c.dtype, c.root, opts); break;
    case OpKind::reduce: comm.reduce(sendp, recvp, c.count, c.dtype, op, c.root, opts); break;
    case OpKind::all_to_all: comm.all_to_all(sendp, recvp, c.count, c.dtype, opts); break;
    case OpKind::gather: comm.gather(sendp, recvp, c.count, c.dtype, c.root, opts); break;
    case OpKind::scatter: comm.scatter(sendp, recvp, c.count, c.dtype, c.root, opts); break;
    default: throw std::logic_error("case kind not in the sweep");
  }
  const Bytes& want = c.expected[static_cast<std::size_t>(r)];
  const auto* got = static_cast<const unsigned char*>(recvp) + l.result_at * e;
  if (want.empty()) return;
  if (std::memcmp(got, want.data(), want.size()) != 0) {
    for (std::size_t i = 0; i < want.size() / e; ++i) {
      if (std::memcmp(got + i * e, want.data() + i * e, e) != 0) {
        throw std::runtime_error(c.describe() + " on " + std::to_string(n) + " ranks: rank " + std::to_string(r) +
                                 " element " + std::to_string(i) + " is " +
                                 std::to_string(element_as_double(c.dtype, got, i)) + ", expected " +
                                 std::to_string(element_as_double(c.dtype, want.data(), i)));
      }
    }
  }
}

std::vector<Case> sweep_cases(int nranks, DataType dtype) {
  std::vector<Case> cases;
  const std::size_t counts[] = {0, 1, 37, 1031};
  const ReduceKind ops[] = {ReduceKind::sum, ReduceKind::prod, ReduceKind::min,
                            ReduceKind::max, ReduceKind::avg,  ReduceKind::premul_sum};
  const OpKind reducing[] = {OpKind::all_reduce, OpKind::reduce_scatter, OpKind::reduce};
  const OpKind moving[] = {OpKind::all_gather, OpKind::broadcast, OpKind::all_to_all, OpKind::gather,
                           OpKind::scatter};
  unsigned salt = 1;
  for (std::size_t count : counts) {
    int root = nranks > 1 ? (static_cast<int>(count) + 1) % nranks : 0;
    for (bool in_place : {false, true}) {
      for (OpKind k : reducing) {
        for (ReduceKind op : ops) cases.push_back(make_case(k, dtype, op, count, root, in_place, nranks, salt++));
      }
      for (OpKind k : moving) {
        if (k == OpKind::all_to_all && in_place) continue;  // NCCL has no in-place all_to_all
        cases.push_back(make_case(k, dtype, ReduceKind::sum, count, root, in_place, nranks, salt++));
      }
    }
  }
  return cases;
}

}  // namespace twinccl::testing
