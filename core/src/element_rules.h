// Internal: how many elements a rank's input and output hold for the even collectives, written
// once for OpDesc (operation.cc: send_elements/recv_elements) and CollectiveSpec (schedule.cc:
// input_elements/output_elements). The uneven (_v) variants read their per-rank counts there.
//
//   if (auto f = even_elements(OpKind::gather, Side::output, rank == root)) ...  // nranks at root
#pragma once

#include <optional>

#include "twinccl/operation.h"

namespace twinccl::detail {

enum class Side { input, output };
// A rank's buffer on `side` holds none, `count`, or nranks x `count` elements.
enum class Elements { none, count, nranks_times_count };

// NCCL's rules (operation.h); nullopt for the uneven variants.
inline std::optional<Elements> even_elements(OpKind kind, Side side, bool root) {
  const bool in = side == Side::input;
  switch (kind) {
    case OpKind::all_reduce:
      return Elements::count;
    case OpKind::all_gather:
      return in ? Elements::count : Elements::nranks_times_count;
    case OpKind::reduce_scatter:
      return in ? Elements::nranks_times_count : Elements::count;
    case OpKind::all_to_all:
      return Elements::nranks_times_count;
    case OpKind::broadcast:
      return in && !root ? Elements::none : Elements::count;
    case OpKind::reduce:
      return !in && !root ? Elements::none : Elements::count;
    case OpKind::gather:
      return in ? Elements::count : root ? Elements::nranks_times_count : Elements::none;
    case OpKind::scatter:
      return !in ? Elements::count : root ? Elements::nranks_times_count : Elements::none;
    case OpKind::send:
      return in ? Elements::count : Elements::none;
    case OpKind::recv:
      return in ? Elements::none : Elements::count;
    case OpKind::barrier:
      return Elements::none;
    case OpKind::all_gather_v:
    case OpKind::reduce_scatter_v:
    case OpKind::all_to_all_v:
    case OpKind::gather_v:
    case OpKind::scatter_v:
      break;
  }
  return std::nullopt;
}

}  // namespace twinccl::detail
