// One rank's own checks (validate): the messages a user reads. Addresses in hex, sizes and offsets
// in elements (bytes only when the distance is not a whole element, and then said so), the
// user's call named rather than an internal function, torch-style pieces named as the user knows
// them ("all_gather's tensor_list[1]").
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "twinccl/errors.h"
#include "twinccl/operation.h"

using namespace twinccl;
using Catch::Matchers::Contains;

namespace {

std::string message_of(const OpDesc& op, int rank, int nranks) {
  try {
    validate(op, rank, nranks, "world");
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "";
}

OpDesc all_reduce(const void* send, void* recv, std::size_t count) {
  OpDesc op;
  op.kind = OpKind::all_reduce;
  op.send = send;
  op.recv = recv;
  op.count = count;
  op.dtype = DataType::float32;
  return op;
}

}  // namespace

TEST_CASE("validate: overlapping buffers are described in hex with element units",
          "[core][validate]") {
  std::vector<float> b(32);
  std::string m = message_of(all_reduce(b.data(), b.data() + 3, 8), 0, 2);
  INFO(m);
  CHECK_THAT(m, Contains("all_reduce on comm 'world' rank 0 (") && Contains("send buffer at 0x") &&
                    Contains("(8 elements of float32) and recv buffer at 0x") &&
                    Contains("(8 elements) overlap") &&
                    Contains("in place needs recv == send, recv is at send + 3 elements"));
  CHECK_THAT(m, !Contains("+64") && !Contains(" B)"));

  auto* bytes = reinterpret_cast<unsigned char*>(b.data());
  std::string odd = message_of(all_reduce(b.data(), bytes + 6, 8), 0, 2);
  INFO(odd);
  CHECK_THAT(odd, Contains("recv is at send + 6 bytes (not a whole number of float32 elements)"));

  OpDesc rs = all_reduce(b.data(), b.data() + 4, 8);
  rs.kind = OpKind::reduce_scatter;  // rank 2 of 4: in place needs recv == send + 16 elements
  std::string rule = message_of(rs, 2, 4);
  INFO(rule);
  CHECK_THAT(rule, Contains("in place needs recv == send + rank*count = send + 16 elements, recv "
                            "is at send + 4 elements"));
}

TEST_CASE("validate: a reduce op value outside ReduceKind names the call, not an internal function",
          "[core][validate]") {
  std::vector<float> b(4);
  OpDesc op = all_reduce(b.data(), b.data(), 4);
  op.op = ReduceOp{static_cast<ReduceKind>(42), 1.0};
  std::string m = message_of(op, 1, 2);
  INFO(m);
  CHECK_THAT(
      m, Contains("all_reduce on comm 'world' rank 1 (") &&
             Contains(
                 "): reduce op value 42 is not a ReduceOp (sum, prod, min, max, avg, premul_sum)"));
  CHECK_THAT(m, !Contains("check_reduce_op_supported") && !Contains("enum"));
}

TEST_CASE("validate: a piece of a torch-style call is named as the user knows it",
          "[core][validate]") {
  OpDesc op;
  op.kind = OpKind::recv;
  op.count = 4;
  op.peer = 1;
  op.recv_capacity = 2;
  std::vector<float> b(2);
  op.recv = b.data();
  op.part_of = "all_gather";
  op.role = "tensor_list[1]";
  std::string m = message_of(op, 0, 2);
  INFO(m);
  CHECK_THAT(m, Contains("all_gather's tensor_list[1] (a recv) on comm 'world' rank 0 (") &&
                    Contains("recv buffer holds 2 elements but the call needs 4"));
}
