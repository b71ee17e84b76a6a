// The collectives' table (op_traits.h). Counts and in-place rules are NCCL's (operation.h); the
// bus-bandwidth factors are nccl-tests' (src/*.cu, getBw: all_reduce 2(n-1)/n, reduce_scatter,
// all_gather and alltoall (n-1)/n, the rooted collectives 1).
#include "twinccl/op_traits.h"

#include <array>
#include <string>

#include "twinccl/errors.h"

namespace twinccl {
namespace {

using E = Elements;
constexpr bool yes = true, no = false;

// clang-format off
constexpr std::array<OpTraits, kOpKindCount> kTraits = {{
  // kind, name, nccl-tests program, reducing, rooted, p2p, uneven,
  //   input {root, others}, output {root, others}, in place, counts, size x nranks, busbw
  {OpKind::all_reduce, "all_reduce", "all_reduce_perf", yes, no, no, no,
   {E::count, E::count}, {E::count, E::count}, InPlace::same, CountsIn::none, no,
   BusBw::two_n_minus_1_over_n},
  {OpKind::reduce_scatter, "reduce_scatter", "reduce_scatter_perf", yes, no, no, no,
   {E::nranks_times_count, E::nranks_times_count}, {E::count, E::count}, InPlace::recv_in_send,
   CountsIn::none, yes, BusBw::n_minus_1_over_n},
  {OpKind::all_gather, "all_gather", "all_gather_perf", no, no, no, no,
   {E::count, E::count}, {E::nranks_times_count, E::nranks_times_count}, InPlace::send_in_recv,
   CountsIn::none, yes, BusBw::n_minus_1_over_n},
  {OpKind::broadcast, "broadcast", "broadcast_perf", no, yes, no, no,
   {E::count, E::none}, {E::count, E::count}, InPlace::same, CountsIn::none, no, BusBw::one},
  {OpKind::reduce, "reduce", "reduce_perf", yes, yes, no, no,
   {E::count, E::count}, {E::count, E::none}, InPlace::same, CountsIn::none, no, BusBw::one},
  {OpKind::all_to_all, "all_to_all", "alltoall_perf", no, no, no, no,
   {E::nranks_times_count, E::nranks_times_count}, {E::nranks_times_count, E::nranks_times_count},
   InPlace::never, CountsIn::none, yes, BusBw::n_minus_1_over_n},
  {OpKind::gather, "gather", "gather_perf", no, yes, no, no,
   {E::count, E::count}, {E::nranks_times_count, E::none}, InPlace::send_in_recv, CountsIn::none,
   yes, BusBw::one},
  {OpKind::scatter, "scatter", "scatter_perf", no, yes, no, no,
   {E::nranks_times_count, E::none}, {E::count, E::count}, InPlace::recv_in_send, CountsIn::none,
   yes, BusBw::one},
  {OpKind::send, "send", "", no, no, yes, no,
   {E::count, E::count}, {E::none, E::none}, InPlace::never, CountsIn::none, no, BusBw::one},
  {OpKind::recv, "recv", "", no, no, yes, no,
   {E::none, E::none}, {E::count, E::count}, InPlace::never, CountsIn::none, no, BusBw::one},
  {OpKind::barrier, "barrier", "", no, no, no, no,
   {E::none, E::none}, {E::none, E::none}, InPlace::never, CountsIn::none, no, BusBw::one},
  {OpKind::all_gather_v, "all_gather_v", "", no, no, no, yes,
   {E::own_block, E::own_block}, {E::blocks, E::blocks}, InPlace::send_in_recv,
   CountsIn::recv_counts, yes, BusBw::n_minus_1_over_n},
  {OpKind::reduce_scatter_v, "reduce_scatter_v", "", yes, no, no, yes,
   {E::blocks, E::blocks}, {E::own_block, E::own_block}, InPlace::recv_in_send,
   CountsIn::recv_counts, yes, BusBw::n_minus_1_over_n},
  {OpKind::all_to_all_v, "all_to_all_v", "", no, no, no, yes,
   {E::blocks, E::blocks}, {E::blocks, E::blocks}, InPlace::never, CountsIn::each_side, yes,
   BusBw::n_minus_1_over_n},
  {OpKind::gather_v, "gather_v", "", no, yes, no, yes,
   {E::own_block, E::own_block}, {E::blocks, E::none}, InPlace::send_in_recv,
   CountsIn::recv_counts, yes, BusBw::one},
  {OpKind::scatter_v, "scatter_v", "", no, yes, no, yes,
   {E::blocks, E::none}, {E::own_block, E::own_block}, InPlace::recv_in_send,
   CountsIn::send_counts, yes, BusBw::one},
}};
// clang-format on

constexpr bool rows_in_enum_order() {
  for (std::size_t i = 0; i < kTraits.size(); ++i) {
    if (static_cast<std::size_t>(kTraits[i].kind) != i) return false;
  }
  return true;
}
static_assert(rows_in_enum_order(), "one row per OpKind, in the enum's order");

}  // namespace

double OpTraits::busbw_factor(int nranks) const {
  if (nranks <= 0) return 0.0;
  const double n = nranks;
  switch (busbw) {
    case BusBw::two_n_minus_1_over_n:
      return 2.0 * (n - 1.0) / n;
    case BusBw::n_minus_1_over_n:
      return (n - 1.0) / n;
    case BusBw::one:
      break;
  }
  return 1.0;
}

const OpTraits& traits(OpKind kind) {
  const auto i = static_cast<std::size_t>(kind);
  if (i >= kTraits.size()) {
    throw InvalidArgument("operation kind " + std::to_string(i) + " is not valid (0.." +
                          std::to_string(kTraits.size() - 1) + ")");
  }
  return kTraits[i];
}

std::span<const OpTraits> all_op_traits() { return kTraits; }

}  // namespace twinccl
