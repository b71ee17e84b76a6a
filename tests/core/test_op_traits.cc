// The collectives' table (twinccl/op_traits.h): one row per kind, and the one element rule read
// the same way from a rank's OpDesc (send_elements) and from the spec built of it (spec_of).
#include <catch2/catch.hpp>
#include <vector>

#include "twinccl/op_traits.h"
#include "twinccl/perf_math.h"

using namespace twinccl;

TEST_CASE("op traits: one row per kind, in enum order, names round-trip", "[core][op_traits]") {
  REQUIRE(all_op_traits().size() == kOpKindCount);
  for (std::size_t i = 0; i < kOpKindCount; ++i) {
    const OpTraits& t = all_op_traits()[i];
    CHECK(static_cast<std::size_t>(t.kind) == i);
    CHECK(name(t.kind) == t.name);
    CHECK(parse_op_kind(t.name) == t.kind);
    CHECK(is_reducing(t.kind) == t.reducing);
    CHECK(is_uneven(t.kind) == (t.counts != CountsIn::none));
  }
  CHECK(traits(OpKind::all_to_all).nccl_tests_name == "alltoall_perf");
  CHECK(busbw_factor(OpKind::all_reduce, 4) == 1.5);
  CHECK(busbw_factor(OpKind::all_gather_v, 4) == 0.75);
  CHECK(busbw_factor(OpKind::gather, 4) == 1.0);
  CHECK_THROWS_WITH(traits(static_cast<OpKind>(200)), Catch::Contains("200 is not valid"));
}

TEST_CASE("op traits: OpDesc and its spec_of hold the same elements on every rank",
          "[core][op_traits]") {
  constexpr int n = 4;
  const std::vector<std::size_t> counts = {3, 0, 2, 5};
  std::vector<std::size_t> matrix;  // all_to_all_v: rank s sends s + 2d elements to rank d
  for (std::size_t s = 0; s < n; ++s) {
    for (std::size_t d = 0; d < n; ++d) matrix.push_back(s + 2 * d);
  }
  for (const OpTraits& t : all_op_traits()) {
    for (int rank = 0; rank < n; ++rank) {
      OpDesc op;
      op.kind = t.kind;
      op.count = t.uneven ? 0 : 7;
      op.root = t.rooted ? 2 : -1;
      op.peer = t.p2p ? 1 : -1;
      if (t.kind == OpKind::all_to_all_v) {
        for (std::size_t p = 0; p < n; ++p) {
          op.send_counts.push_back(matrix[static_cast<std::size_t>(rank) * n + p]);
          op.recv_counts.push_back(matrix[p * n + static_cast<std::size_t>(rank)]);
        }
      } else if (t.counts == CountsIn::send_counts) {
        op.send_counts = counts;
      } else if (t.counts == CountsIn::recv_counts) {
        op.recv_counts = counts;
      }
      CollectiveSpec spec = spec_of(op, n);
      if (t.kind == OpKind::all_to_all_v) spec.matrix = matrix;
      INFO(t.name << " rank " << rank);
      CHECK(spec.root == (t.rooted ? 2 : 0));
      CHECK(send_elements(op, rank, n) == input_elements(spec, rank));
      CHECK(recv_elements(op, rank, n) == output_elements(spec, rank));
    }
  }
}

TEST_CASE("op traits: spec_of packs the uneven displacements the call leaves empty",
          "[core][op_traits]") {
  OpDesc op;
  op.kind = OpKind::reduce_scatter_v;
  op.recv_counts = {3, 0, 2};
  CollectiveSpec spec = spec_of(op, 3);
  CHECK(spec.counts == op.recv_counts);
  CHECK(spec.displs == std::vector<std::size_t>{0, 3, 3});
  op.send_displs = {10, 4, 0};
  CHECK(spec_of(op, 3).displs == op.send_displs);
  CHECK(send_elements(op, 1, 3) == 13);  // the blocks end at 10 + 3
}
