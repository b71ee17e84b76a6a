// What each collective is, as data: one row per OpKind (op_traits.cc) with its names, flags,
// element rule, in-place rule and nccl-tests' bus-bandwidth factor. Code asks the row instead of
// switching over the kind, so adding a collective kind adds a row here (docs/architecture.md).
//
//   const OpTraits& t = traits(OpKind::gather);
//   t.output.root;                   // Elements::nranks_times_count: the root receives every block
//   t.busbw_factor(8);               // 1.0, nccl-tests' gather.cu
//   for (const OpTraits& k : all_op_traits()) std::cout << k.name << "\n";
//   CollectiveSpec spec = spec_of(op, nranks);   // what schedules are built from
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "twinccl/operation.h"
#include "twinccl/schedule.h"

namespace twinccl {

// Every OpKind has a row below, in the enum's order; a new kind goes last.
inline constexpr std::size_t kOpKindCount = static_cast<std::size_t>(OpKind::scatter_v) + 1;

// How many elements one rank's send (input) or recv (output) buffer holds.
enum class Elements : std::uint8_t {
  none,                // the call does not use the buffer
  count,               // NCCL's count
  nranks_times_count,  // one count-sized block per rank
  own_block,           // uneven: this rank's entry of the per-rank counts
  blocks,              // uneven: every rank's block, packed or at the displacements
};

// The rule for the root rank and for every other rank (equal when the call has no root).
struct SideRule {
  Elements root = Elements::none;
  Elements others = Elements::none;
  Elements of(bool is_root) const { return is_root ? root : others; }
  bool holds(Elements e) const { return root == e || others == e; }
};

// NCCL's in-place rules: where the other buffer lies when a call is in place.
enum class InPlace : std::uint8_t {
  never,         // no in-place form (all_to_all(_v), send, recv, barrier)
  same,          // recv == send (all_reduce, broadcast, reduce)
  recv_in_send,  // recv == send + this rank's block (reduce_scatter, scatter and their _v)
  send_in_recv,  // send == recv + this rank's block (all_gather, gather and their _v)
};

// Which OpDesc vector holds an uneven variant's per-rank counts.
enum class CountsIn : std::uint8_t {
  none,         // the even kinds: `count`
  recv_counts,  // all_gather_v, reduce_scatter_v, gather_v
  send_counts,  // scatter_v
  each_side,    // all_to_all_v: send_counts for send, recv_counts for recv
};

// nccl-tests' bus bandwidth = algbw x factor (its *.cu files' getBw).
enum class BusBw : std::uint8_t { one, n_minus_1_over_n, two_n_minus_1_over_n };

struct OpTraits {
  OpKind kind;
  std::string_view name;             // "all_reduce"
  std::string_view nccl_tests_name;  // "all_reduce_perf"; empty where nccl-tests has none
  bool reducing;                     // combines the ranks' data with a ReduceOp
  bool rooted;                       // has a root rank
  bool p2p;                          // send, recv
  bool uneven;                       // the _v variants: per-rank counts
  SideRule input, output;            // elements of the send and recv buffers
  InPlace in_place;
  CountsIn counts;
  bool size_counts_all_ranks;  // nccl-tests' size is nranks x count x element size
  BusBw busbw;

  double busbw_factor(int nranks) const;
  // A collective with NCCL's single count (not send/recv, barrier or an uneven variant).
  bool even_collective() const { return !uneven && !p2p && kind != OpKind::barrier; }
};

// The row of `kind`; throws InvalidArgument for a value outside the enum.
const OpTraits& traits(OpKind kind);
// Every row in enum order.
std::span<const OpTraits> all_op_traits();

enum class Side : std::uint8_t { input, output };  // the send buffer, the recv buffer
inline const SideRule& rule_of(const OpTraits& t, Side side) {
  return side == Side::input ? t.input : t.output;
}

// The per-rank counts and displacements that describe `side` of an uneven call (the kind's
// counts vector, this side's displacements), with their names for messages.
struct BlockVectors {
  const std::vector<std::size_t>& counts;
  const char* counts_name;
  const std::vector<std::size_t>& displs;
  const char* displs_name;
};
BlockVectors block_vectors(const OpDesc& op, Side side);

// The one element rule: what a buffer holds on `rank` under `rule` (count, nranks x count, this
// rank's entry of b.counts, or the span of b's blocks); InvalidArgument naming `kind` and the
// entry when that overflows size_t. send_elements and input_elements both ask it.
std::size_t elements_under(Elements rule, OpKind kind, std::size_t count, int rank, int nranks,
                           const BlockVectors& b);

// The spec of a call, from one rank's OpDesc: kind, count, root (0 when the kind has none), the
// uneven variants' counts and displacements (packed when the call gives none). The one
// description the emulator (after every rank agreed), replay and the default choice build
// schedules from. all_to_all_v's count matrix needs every rank's call: the caller fills
// spec.matrix and its displacements.
CollectiveSpec spec_of(const OpDesc& op, int nranks);
// all_to_all_v on `rank`: the elements it sends to each peer (Side::input: row `rank` of
// spec.matrix) or receives from each (Side::output: column `rank`), and that side's
// displacements (empty: packed). InvalidArgument when the matrix or displacements are not n x n.
struct PeerCounts {
  std::vector<std::size_t> counts, displs;
};
PeerCounts matrix_side(const CollectiveSpec& spec, int rank, Side side);
// Where each block of `counts` starts when the blocks are packed in rank order.
std::vector<std::size_t> packed_displs(std::span<const std::size_t> counts);

}  // namespace twinccl
