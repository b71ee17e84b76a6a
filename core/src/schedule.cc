// How many elements each rank's input and output hold for a collective, by the kind's rule in
// op_traits.h (the uneven variants read the spec's counts), and the spec of one rank's call.
#include "twinccl/schedule.h"

#include <algorithm>
#include <string>

#include "twinccl/errors.h"
#include "twinccl/op_traits.h"

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

std::vector<std::size_t> displs_line(const std::vector<std::size_t>& displs, std::size_t r,
                                     std::size_t n) {
  if (displs.empty()) return {};
  return {displs.begin() + static_cast<std::ptrdiff_t>(r * n),
          displs.begin() + static_cast<std::ptrdiff_t>((r + 1) * n)};
}

// Elements the buffer on `side` holds on `rank`, by the kind's rule (op_traits.h).
std::size_t elements(const CollectiveSpec& spec, Side side, int rank) {
  const std::size_t r = rank_index(spec, rank);
  const auto n = static_cast<std::size_t>(spec.nranks);
  switch (rule_of(traits(spec.kind), side).of(rank == spec.root)) {
    case Elements::none:
      return 0;
    case Elements::count:
      return spec.count;
    case Elements::nranks_times_count:
      return n * spec.count;
    case Elements::own_block:
      return checked_counts(spec)[r];
    case Elements::blocks:
      if (spec.kind == OpKind::all_to_all_v) {  // row r (sent) or column r (received)
        const bool in = side == Side::input;
        return extent(matrix_line(spec, r, !in),
                      displs_line(in ? spec.send_displs : spec.recv_displs, r, n));
      }
      return extent(checked_counts(spec), spec.displs);
  }
  return 0;
}

}  // namespace

std::size_t input_elements(const CollectiveSpec& spec, int rank) {
  return elements(spec, Side::input, rank);
}

std::size_t output_elements(const CollectiveSpec& spec, int rank) {
  return elements(spec, Side::output, rank);
}

std::vector<std::size_t> packed_displs(const std::vector<std::size_t>& counts) {
  std::vector<std::size_t> d(counts.size());
  std::size_t total = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    d[i] = total;
    total += counts[i];
  }
  return d;
}

CollectiveSpec spec_of(const OpDesc& op, int nranks) {
  const OpTraits& t = traits(op.kind);
  CollectiveSpec spec;
  spec.kind = op.kind;
  spec.nranks = nranks;
  spec.root = t.rooted ? op.root : 0;
  if (!t.uneven) {
    spec.count = op.count;
  } else if (t.counts != CountsIn::each_side) {
    const BlockVectors b =
        block_vectors(op, t.input.holds(Elements::blocks) ? Side::input : Side::output);
    spec.counts = b.counts;
    spec.displs = b.displs.empty() ? packed_displs(b.counts) : b.displs;
  }
  return spec;
}

}  // namespace twinccl
