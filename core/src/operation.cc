// OpDesc helpers: names, element counts per rank, NCCL's in-place rules and one-rank validation.
#include "twinccl/operation.h"

#include <algorithm>
#include <string>

#include "twinccl/errors.h"
#include "twinccl/op_traits.h"
#include "twinccl/reduction.h"

namespace twinccl {
namespace {

std::string strip(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c != '_' && c != '-')
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  }
  return out;
}

// a * b, throwing when it overflows size_t.
std::size_t checked_mul(std::size_t a, std::size_t b, const OpDesc& op, std::string_view what) {
  if (a != 0 && b > ~std::size_t{0} / a) {
    throw InvalidArgument(std::string(name(op.kind)) + " (" + describe_call_site(op.where) +
                          "): " + std::string(what) + " = " + std::to_string(a) + " x " +
                          std::to_string(b) + " overflows");
  }
  return a * b;
}

// Elements a buffer described by counts (+ optional displacements) spans; `counts_name` and
// `displs_name` ("recv_counts", "send_displs") name them when the end overflows size_t.
std::size_t extent(const std::vector<std::size_t>& counts, const std::vector<std::size_t>& displs,
                   const OpDesc& op, const char* counts_name, const char* displs_name) {
  std::size_t total = 0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    std::size_t begin = displs.empty() ? total : displs[i];
    std::size_t end = begin + counts[i];
    if (end < begin) {
      std::string entry =
          std::string(counts_name) + "[" + std::to_string(i) + "] = " + std::to_string(counts[i]);
      throw InvalidArgument(std::string(name(op.kind)) + ": " + entry +
                            (displs.empty()
                                 ? " after " + std::to_string(begin) + " elements of the earlier " +
                                       counts_name + " (packed)"
                                 : " at " + std::string(displs_name) + "[" + std::to_string(i) +
                                       "] = " + std::to_string(begin)) +
                            " ends past SIZE_MAX elements");
    }
    total = displs.empty() ? end : std::max(total, end);
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
  switch (rule_of(traits(op.kind), side).of(rank == op.root)) {
    case Elements::none:
      return 0;
    case Elements::count:
      return op.count;
    case Elements::nranks_times_count:
      return checked_mul(static_cast<std::size_t>(nranks), op.count, op, "nranks x count");
    case Elements::own_block:
      return at(block_vectors(op, side).counts, rank);
    case Elements::blocks: {
      const BlockVectors b = block_vectors(op, side);
      return extent(b.counts, b.displs, op, b.counts_name, b.displs_name);
    }
  }
  return 0;
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
  std::string key = strip(text);
  for (const OpTraits& k : all_op_traits()) {
    if (strip(k.name) == key) return k.kind;
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
