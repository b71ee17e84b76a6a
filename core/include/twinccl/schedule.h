// Schedule: the one IR for data AND timing. An algorithm turns a collective into, for each rank,
// a list of steps; each step is a set of operations (send/recv/reduce/copy of element ranges)
// that may run concurrently; step k+1 starts when every operation of step k completed. Ranks
// synchronise only through send/recv: the k-th send from A to B (in step order, then operation
// order) pairs with the k-th recv or recv_reduce on B from A, with equal counts.
//
//   Schedule s = build_schedule(spec, "ring", {});
//   for (const Step& step : s.ranks[0].steps) for (const StepOp& op : step.ops) ...
//
// Reading a slice of `input` in a reducing collective reads the rank's *contribution*
// (Reduction::load: premul/avg scaling applied). An operation marked `finalize` applies the
// reduction's post-division (integer avg) to its destination.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "twinccl/operation.h"

namespace twinccl {

enum class BufferKind : std::uint8_t { input, output, scratch };

struct Slice {
  BufferKind buffer = BufferKind::input;
  std::size_t offset = 0;  // elements
  std::size_t count = 0;   // elements
  friend bool operator==(const Slice&, const Slice&) = default;
};

enum class StepOpKind : std::uint8_t {
  send,         // src -> peer
  recv,         // peer -> dst
  recv_reduce,  // dst = (peer's data) (op) src
  copy,         // dst = src (local)
  reduce,       // dst = src (op) src2 (local)
};

struct StepOp {
  StepOpKind kind = StepOpKind::copy;
  int peer = -1;    // send, recv, recv_reduce
  int channel = 0;  // which parallel channel carries it (timing only)
  Slice src;        // send, recv_reduce (local operand), copy, reduce
  Slice src2;       // reduce
  Slice dst;        // recv, recv_reduce, copy, reduce
  bool finalize = false;
};

struct Step {
  std::vector<StepOp> ops;
};

struct RankSchedule {
  std::vector<Step> steps;
  std::size_t scratch_count = 0;  // elements of scratch memory this rank needs
};

// What the algorithms need to know about a call, the same for every rank.
struct CollectiveSpec {
  OpKind kind = OpKind::all_reduce;
  int nranks = 1;
  std::size_t count = 0;  // NCCL's count (operation.h)
  int root = 0;
  // gather_v / scatter_v / all_gather_v / reduce_scatter_v: per-rank counts and displacements
  // in the big buffer (displs empty = packed).
  std::vector<std::size_t> counts, displs;
  // all_to_all_v: counts[src * nranks + dst]; per-rank displacements [rank * nranks + peer].
  std::vector<std::size_t> matrix, send_displs, recv_displs;
  bool reducing() const { return is_reducing(kind); }
};

struct Schedule {
  std::string algorithm;
  CollectiveSpec spec;
  std::vector<RankSchedule> ranks;
};

// Total elements of input/output a rank's buffers must hold for `spec` (same as OpDesc rules).
std::size_t input_elements(const CollectiveSpec& spec, int rank);
std::size_t output_elements(const CollectiveSpec& spec, int rank);

}  // namespace twinccl
