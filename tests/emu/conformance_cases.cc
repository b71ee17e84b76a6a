#include "conformance_cases.h"

#include <fmt/format.h>

#include <cstring>
#include <stdexcept>

#include "twinccl/call_layout.h"
#include "twinccl/reduce_kernels.h"

namespace twinccl::testing {
namespace {

double scalar_for(DataType dtype, int rank) {
  if (!is_floating(dtype)) return rank % 3 + 1;
  return 0.5 * (rank % 3 + 1);
}

OpDesc as_call(const Case& c) {
  OpDesc call;
  call.kind = c.kind;
  call.dtype = c.dtype;
  call.count = c.count;
  call.root = c.root;
  call.op = c.ops.empty() ? ReduceOp{c.op, 1.0} : c.ops[0];
  return call;
}

}  // namespace

std::string Case::describe() const {
  return std::string(name(kind)) + " " + std::string(name(dtype)) + " " +
         std::string(twinccl::name(op)) + " count=" + std::to_string(count) +
         " root=" + std::to_string(root) + (in_place ? " in-place" : " out-of-place");
}

Case make_case(OpKind kind, DataType dtype, ReduceKind op, std::size_t count, int root,
               bool in_place, int nranks, unsigned salt) {
  Case c{kind, dtype, op, count, root, in_place, salt, {}, {}, {}};
  OpDesc call = as_call(c);
  for (int r = 0; r < nranks; ++r) {
    c.inputs.push_back(make_input(dtype, op, r, send_elements(call, r, nranks), salt));
    c.ops.push_back(op == ReduceKind::premul_sum ? ReduceOp::premul_sum(scalar_for(dtype, r))
                                                 : ReduceOp{op, 1.0});
  }
  call.op = c.ops[0];
  for (int r = 0; r < nranks; ++r) {
    Bytes before(recv_elements(call, r, nranks) * size_of(dtype), 0);
    c.expected.push_back(reference_output(call, c.inputs, c.ops, r, before));
  }
  return c;
}

void run_case(Communicator& comm, const Case& c, std::string_view algorithm) {
  int r = comm.rank();
  CallShape shape{c.kind, c.dtype, c.ops[static_cast<std::size_t>(r)], c.count, c.root, c.in_place};
  CallSetup s = setup_call(comm, shape);
  s.fill_input(c.inputs[static_cast<std::size_t>(r)]);
  issue_call(comm, s, CallOptions{false, algorithm});
  std::size_t e = size_of(c.dtype);
  const Bytes& want = c.expected[static_cast<std::size_t>(r)];
  if (s.result_elements * e != want.size()) {
    throw std::runtime_error(c.describe() + ": result region of " +
                             std::to_string(s.result_elements) + " elements, reference has " +
                             std::to_string(want.size() / e));
  }
  const std::vector<unsigned char> result = s.result_bytes();
  const unsigned char* got = result.data();
  if (want.empty() || std::memcmp(got, want.data(), want.size()) == 0) return;
  for (std::size_t i = 0; i < want.size() / e; ++i) {
    if (std::memcmp(got + i * e, want.data() + i * e, e) != 0) {
      throw std::runtime_error(
          c.describe() + " on " + std::to_string(comm.size()) + " ranks: rank " +
          std::to_string(r) + " element " + std::to_string(i) + " is " +
          fmt::format("{:.17g}", element_as_double(c.dtype, got, i)) + ", expected " +
          fmt::format("{:.17g}", element_as_double(c.dtype, want.data(), i)));
    }
  }
}

std::vector<Case> sweep_cases(int nranks, DataType dtype) {
  std::vector<Case> cases;
  const std::size_t counts[] = {0, 1, 37, 1031};
  const ReduceKind ops[] = {ReduceKind::sum, ReduceKind::prod, ReduceKind::min,
                            ReduceKind::max, ReduceKind::avg,  ReduceKind::premul_sum};
  const OpKind reducing[] = {OpKind::all_reduce, OpKind::reduce_scatter, OpKind::reduce};
  const OpKind moving[] = {OpKind::all_gather, OpKind::broadcast, OpKind::all_to_all,
                           OpKind::gather, OpKind::scatter};
  unsigned salt = 1;
  for (std::size_t count : counts) {
    int root = nranks > 1 ? (static_cast<int>(count) + 1) % nranks : 0;
    for (bool in_place : {false, true}) {
      for (OpKind k : reducing) {
        for (ReduceKind op : ops)
          cases.push_back(make_case(k, dtype, op, count, root, in_place, nranks, salt++));
      }
      for (OpKind k : moving) {
        if (k == OpKind::all_to_all && in_place) continue;  // NCCL has no in-place all_to_all
        cases.push_back(
            make_case(k, dtype, ReduceKind::sum, count, root, in_place, nranks, salt++));
      }
    }
  }
  return cases;
}

}  // namespace twinccl::testing
