// How many elements each rank's input and output hold for a collective: the even collectives'
// rule shared with operation.h's OpDesc (element_rules.h), the uneven ones' from the spec's counts.
#include "twinccl/schedule.h"

#include <algorithm>
#include <optional>
#include <string>

#include "element_rules.h"
#include "twinccl/errors.h"

namespace twinccl {
namespace {

std::size_t rank_index(const CollectiveSpec& spec, int rank) {
  if (rank < 0 || rank >= spec.nranks) {
    throw InvalidArgument(std::string(name(spec.kind)) + " schedule: rank " + std::to_string(rank) +
                          " out of range [0, " + std::to_string(spec.nranks) + ")");
  }
  return static_cast<std::size_t>(rank);
}

const std::vector<std::size_t>& checked_counts(const CollectiveSpec& spec) {
  if (spec.counts.size() != static_cast<std::size_t>(spec.nranks)) {
    throw InvalidArgument(std::string(name(spec.kind)) +
                          " schedule: " + std::to_string(spec.counts.size()) + " counts for " +
                          std::to_string(spec.nranks) + " ranks");
  }
  return spec.counts;
}

// Elements a buffer of blocks (counts at displs, or packed) must hold.
std::size_t extent(const std::vector<std::size_t>& counts, const std::vector<std::size_t>& displs) {
  std::size_t total = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    total = displs.empty() ? total + counts[i] : std::max(total, displs.at(i) + counts[i]);
  }
  return total;
}

// all_to_all_v: what rank r sends (row r) or receives (column r) of the count matrix.
std::vector<std::size_t> matrix_line(const CollectiveSpec& spec, std::size_t r, bool column) {
  const auto n = static_cast<std::size_t>(spec.nranks);
  if (spec.matrix.size() != n * n) {
    throw InvalidArgument("all_to_all_v schedule: count matrix has " +
                          std::to_string(spec.matrix.size()) + " entries, expected " +
                          std::to_string(n * n));
  }
  std::vector<std::size_t> line(n);
  for (std::size_t p = 0; p < n; ++p) {
    line[p] = column ? spec.matrix[p * n + r] : spec.matrix[r * n + p];
  }
  return line;
}

// The even collectives' rule (element_rules.h); nullopt for the uneven ones.
std::optional<std::size_t> even(const CollectiveSpec& spec, detail::Side side, int rank) {
  const auto e = detail::even_elements(spec.kind, side, rank == spec.root);
  if (!e) return std::nullopt;
  if (*e == detail::Elements::none) return 0;
  if (*e == detail::Elements::count) return spec.count;
  return static_cast<std::size_t>(spec.nranks) * spec.count;
}

std::vector<std::size_t> displs_line(const std::vector<std::size_t>& displs, std::size_t r,
                                     std::size_t n) {
  if (displs.empty()) return {};
  return {displs.begin() + static_cast<std::ptrdiff_t>(r * n),
          displs.begin() + static_cast<std::ptrdiff_t>((r + 1) * n)};
}

}  // namespace

std::size_t input_elements(const CollectiveSpec& spec, int rank) {
  const std::size_t r = rank_index(spec, rank);
  const auto n = static_cast<std::size_t>(spec.nranks);
  const bool root = rank == spec.root;
  if (const auto e = even(spec, detail::Side::input, rank)) return *e;
  switch (spec.kind) {
    case OpKind::all_gather_v:
    case OpKind::gather_v:
      return checked_counts(spec)[r];
    case OpKind::reduce_scatter_v:
      return extent(checked_counts(spec), spec.displs);
    case OpKind::scatter_v:
      return root ? extent(checked_counts(spec), spec.displs) : 0;
    case OpKind::all_to_all_v:
      return extent(matrix_line(spec, r, false), displs_line(spec.send_displs, r, n));
    default:
      return 0;
  }
}

std::size_t output_elements(const CollectiveSpec& spec, int rank) {
  const std::size_t r = rank_index(spec, rank);
  const auto n = static_cast<std::size_t>(spec.nranks);
  const bool root = rank == spec.root;
  if (const auto e = even(spec, detail::Side::output, rank)) return *e;
  switch (spec.kind) {
    case OpKind::all_gather_v:
      return extent(checked_counts(spec), spec.displs);
    case OpKind::gather_v:
      return root ? extent(checked_counts(spec), spec.displs) : 0;
    case OpKind::reduce_scatter_v:
    case OpKind::scatter_v:
      return checked_counts(spec)[r];
    case OpKind::all_to_all_v:
      return extent(matrix_line(spec, r, true), displs_line(spec.recv_displs, r, n));
    default:
      return 0;
  }
}

}  // namespace twinccl
