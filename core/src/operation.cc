// OpDesc helpers: names, element counts per rank, NCCL's in-place rules and one-rank validation.
#include "twinccl/operation.h"

#include <algorithm>
#include <string>

#include "twinccl/ascii_case.h"
#include "twinccl/errors.h"
#include "twinccl/op_traits.h"
#include "twinccl/reduction.h"

namespace twinccl {
namespace {

// Elements the blocks of `b` span (at b.displs, packed when empty); throws naming the entry whose
// end overflows size_t.
std::size_t extent(const BlockVectors& b, OpKind kind) {
  const std::string call(name(kind));
  if (!b.displs.empty() && b.displs.size() != b.counts.size()) {
    throw InvalidArgument(call + ": " + std::to_string(b.displs.size()) + " " + b.displs_name +
                          " for " + std::to_string(b.counts.size()) + " " + b.counts_name);
  }
  std::size_t total = 0;
  for (std::size_t i = 0; i < b.counts.size(); ++i) {
    std::size_t begin = b.displs.empty() ? total : b.displs[i];
    std::size_t end = begin + b.counts[i];
    if (end < begin) {
      std::string entry = std::string(b.counts_name) + "[" + std::to_string(i) +
                          "] = " + std::to_string(b.counts[i]);
      throw InvalidArgument(call + ": " + entry +
                            (b.displs.empty()
                                 ? " after " + std::to_string(begin) + " elements of the earlier " +
                                       b.counts_name + " (packed)"
                                 : " at " + std::string(b.displs_name) + "[" + std::to_string(i) +
                                       "] = " + std::to_string(begin)) +
                            " ends past SIZE_MAX elements");
    }
    total = b.displs.empty() ? end : std::max(total, end);
  }
  return total;
}

std::size_t at(const std::vector<std::size_t>& v, int i) {
  return i >= 0 && static_cast<std::size_t>(i) < v.size() ? v[static_cast<std::size_t>(i)] : 0;
}

bool valid(OpKind k) { return static_cast<std::size_t>(k) < kOpKindCount; }

// Elements op's buffer on `side` holds on `rank`, by the kind's rule (op_traits.h).
std::size_t elements(const OpDesc& op, Side side, int rank, int nranks) {
  if (!valid(op.kind)) return 0;
  return elements_under(rule_of(traits(op.kind), side).of(rank == op.root), op.kind, op.count, rank,
                        nranks, block_vectors(op, side));
}

// Where this rank's block starts in the buffer on `side` (elements): rank x count, or the
// uneven call's displacement (packed when none are given).
std::size_t block_offset(const OpDesc& op, Side side, int rank) {
  if (!is_uneven(op.kind)) return static_cast<std::size_t>(rank) * op.count;
  const BlockVectors b = block_vectors(op, side);
  if (!b.displs.empty()) return at(b.displs, rank);
  std::size_t displ = 0;
  for (int i = 0; i < rank; ++i) displ += at(b.counts, i);
  return displ;
}

}  // namespace

std::string_view name(OpKind kind) { return valid(kind) ? traits(kind).name : "invalid"; }

OpKind parse_op_kind(std::string_view text) {
  std::string key = name_key(text);
  for (const OpTraits& k : all_op_traits()) {
    if (name_key(k.name) == key) return k.kind;
  }
  std::string names;
  for (const OpTraits& k : all_op_traits()) {
    names += (names.empty() ? "" : ", ") + std::string(k.name);
  }
  throw InvalidArgument("unknown operation '" + std::string(text) + "'; expected one of: " + names);
}

bool is_reducing(OpKind k) { return valid(k) && traits(k).reducing; }
bool is_rooted(OpKind k) { return valid(k) && traits(k).rooted; }
bool is_p2p(OpKind k) { return valid(k) && traits(k).p2p; }
bool is_uneven(OpKind k) { return valid(k) && traits(k).uneven; }

std::size_t elements_under(Elements rule, OpKind kind, std::size_t count, int rank, int nranks,
                           const BlockVectors& b) {
  const auto n = static_cast<std::size_t>(nranks);
  switch (rule) {
    case Elements::none:
      return 0;
    case Elements::count:
      return count;
    case Elements::nranks_times_count:
      if (count != 0 && n > ~std::size_t{0} / count) {
        throw InvalidArgument(std::string(name(kind)) + ": nranks x count = " + std::to_string(n) +
                              " x " + std::to_string(count) + " overflows");
      }
      return n * count;
    case Elements::own_block:
      return at(b.counts, rank);
    case Elements::blocks:
      return extent(b, kind);
  }
  return 0;
}

BlockVectors block_vectors(const OpDesc& op, Side side) {
  const bool in = side == Side::input;
  const CountsIn c = valid(op.kind) ? traits(op.kind).counts : CountsIn::none;
  const bool send = c == CountsIn::send_counts || (c == CountsIn::each_side && in);
  return {send ? op.send_counts : op.recv_counts, send ? "send_counts" : "recv_counts",
          in ? op.send_displs : op.recv_displs, in ? "send_displs" : "recv_displs"};
}

std::size_t send_elements(const OpDesc& op, int rank, int nranks) {
  return elements(op, Side::input, rank, nranks);
}

std::size_t recv_elements(const OpDesc& op, int rank, int nranks) {
  return elements(op, Side::output, rank, nranks);
}

bool is_in_place(const OpDesc& op, int rank) {
  if (op.send == nullptr || op.recv == nullptr || !valid(op.kind)) return false;
  auto send = static_cast<const char*>(op.send);
  auto recv = static_cast<const char*>(op.recv);
  const std::size_t element = size_of(op.dtype);
  switch (traits(op.kind).in_place) {
    case InPlace::never:
      return false;
    case InPlace::same:
      return send == recv;
    case InPlace::recv_in_send:
      return recv == send + block_offset(op, Side::input, rank) * element;
    case InPlace::send_in_recv:
      return send == recv + block_offset(op, Side::output, rank) * element;
  }
  return false;
}

}  // namespace twinccl
