// How many elements each rank's input and output hold for a collective, by the kind's rule in
// op_traits.h (the uneven variants read the spec's counts), and the spec of one rank's call.
#include "twinccl/schedule.h"

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

// Elements the buffer on `side` holds on `rank`, by the kind's rule (op_traits.h).
std::size_t elements(const CollectiveSpec& spec, Side side, int rank) {
  rank_index(spec, rank);  // throws when out of range
  const Elements rule = rule_of(traits(spec.kind), side).of(rank == spec.root);
  if (rule == Elements::blocks && spec.kind == OpKind::all_to_all_v) {
    const PeerCounts p = matrix_side(spec, rank, side);
    return elements_under(rule, spec.kind, 0, rank, spec.nranks,
                          {p.counts, "counts", p.displs, "displs"});
  }
  const bool blocks = rule == Elements::own_block || rule == Elements::blocks;
  return elements_under(
      rule, spec.kind, spec.count, rank, spec.nranks,
      {blocks ? checked_counts(spec) : spec.counts, "counts", spec.displs, "displs"});
}

}  // namespace

std::size_t input_elements(const CollectiveSpec& spec, int rank) {
  return elements(spec, Side::input, rank);
}

std::size_t output_elements(const CollectiveSpec& spec, int rank) {
  return elements(spec, Side::output, rank);
}

PeerCounts matrix_side(const CollectiveSpec& spec, int rank, Side side) {
  const auto n = static_cast<std::size_t>(spec.nranks);
  const std::size_t r = rank_index(spec, rank);
  const std::vector<std::size_t>& displs =
      side == Side::input ? spec.send_displs : spec.recv_displs;
  if (spec.matrix.size() != n * n || (!displs.empty() && displs.size() != n * n)) {
    throw InvalidArgument("all_to_all_v schedule: count matrix has " +
                          std::to_string(spec.matrix.size()) + " entries and " +
                          (side == Side::input ? "send" : "recv") + " displacements " +
                          std::to_string(displs.size()) + ", expected " + std::to_string(n * n));
  }
  PeerCounts p;
  for (std::size_t q = 0; q < n; ++q) {  // row r is sent, column r received
    p.counts.push_back(side == Side::input ? spec.matrix[r * n + q] : spec.matrix[q * n + r]);
    if (!displs.empty()) p.displs.push_back(displs[r * n + q]);
  }
  return p;
}

std::vector<std::size_t> packed_displs(std::span<const std::size_t> counts) {
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
