// OpDesc helpers: names, element counts per rank, NCCL's in-place rules and one-rank validation.
#include "twinccl/operation.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string>

#include "element_rules.h"
#include "twinccl/errors.h"
#include "twinccl/reduction.h"

namespace twinccl {
namespace {

struct KindName {
  OpKind kind;
  std::string_view name;
};

constexpr std::array<KindName, 16> kKindNames = {{
    {OpKind::all_reduce, "all_reduce"},
    {OpKind::reduce_scatter, "reduce_scatter"},
    {OpKind::all_gather, "all_gather"},
    {OpKind::broadcast, "broadcast"},
    {OpKind::reduce, "reduce"},
    {OpKind::all_to_all, "all_to_all"},
    {OpKind::gather, "gather"},
    {OpKind::scatter, "scatter"},
    {OpKind::send, "send"},
    {OpKind::recv, "recv"},
    {OpKind::barrier, "barrier"},
    {OpKind::all_gather_v, "all_gather_v"},
    {OpKind::reduce_scatter_v, "reduce_scatter_v"},
    {OpKind::all_to_all_v, "all_to_all_v"},
    {OpKind::gather_v, "gather_v"},
    {OpKind::scatter_v, "scatter_v"},
}};

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

// The even collectives' rule (element_rules.h) for `op`; nullopt for the uneven ones.
std::optional<std::size_t> even(const OpDesc& op, detail::Side side, int rank, int nranks) {
  const auto e = detail::even_elements(op.kind, side, rank == op.root);
  if (!e) return std::nullopt;
  if (*e == detail::Elements::none) return 0;
  if (*e == detail::Elements::count) return op.count;
  return checked_mul(static_cast<std::size_t>(nranks), op.count, op, "nranks x count");
}

}  // namespace

std::string_view name(OpKind kind) {
  for (const auto& k : kKindNames) {
    if (k.kind == kind) return k.name;
  }
  return "invalid";
}

OpKind parse_op_kind(std::string_view text) {
  std::string key = strip(text);
  for (const auto& k : kKindNames) {
    if (strip(k.name) == key) return k.kind;
  }
  std::string names;
  for (const auto& k : kKindNames) names += (names.empty() ? "" : ", ") + std::string(k.name);
  throw InvalidArgument("unknown operation '" + std::string(text) + "'; expected one of: " + names);
}

bool is_reducing(OpKind k) {
  return k == OpKind::all_reduce || k == OpKind::reduce_scatter || k == OpKind::reduce ||
         k == OpKind::reduce_scatter_v;
}
bool is_rooted(OpKind k) {
  return k == OpKind::broadcast || k == OpKind::reduce || k == OpKind::gather ||
         k == OpKind::scatter || k == OpKind::gather_v || k == OpKind::scatter_v;
}
bool is_p2p(OpKind k) { return k == OpKind::send || k == OpKind::recv; }
bool is_uneven(OpKind k) {
  return k == OpKind::all_gather_v || k == OpKind::reduce_scatter_v || k == OpKind::all_to_all_v ||
         k == OpKind::gather_v || k == OpKind::scatter_v;
}

std::size_t send_elements(const OpDesc& op, int rank, int nranks) {
  if (const auto e = even(op, detail::Side::input, rank, nranks)) return *e;
  switch (op.kind) {
    case OpKind::all_gather_v:
    case OpKind::gather_v:
      return at(op.recv_counts, rank);
    case OpKind::reduce_scatter_v:
      return extent(op.recv_counts, op.send_displs, op, "recv_counts", "send_displs");
    case OpKind::all_to_all_v:
      return extent(op.send_counts, op.send_displs, op, "send_counts", "send_displs");
    case OpKind::scatter_v:
      return rank == op.root
                 ? extent(op.send_counts, op.send_displs, op, "send_counts", "send_displs")
                 : 0;
    default:
      return 0;
  }
}

std::size_t recv_elements(const OpDesc& op, int rank, int nranks) {
  if (const auto e = even(op, detail::Side::output, rank, nranks)) return *e;
  switch (op.kind) {
    case OpKind::all_gather_v:
      return extent(op.recv_counts, op.recv_displs, op, "recv_counts", "recv_displs");
    case OpKind::reduce_scatter_v:
      return at(op.recv_counts, rank);
    case OpKind::all_to_all_v:
      return extent(op.recv_counts, op.recv_displs, op, "recv_counts", "recv_displs");
    case OpKind::gather_v:
      return rank == op.root
                 ? extent(op.recv_counts, op.recv_displs, op, "recv_counts", "recv_displs")
                 : 0;
    case OpKind::scatter_v:
      return at(op.send_counts, rank);
    default:
      return 0;
  }
}

bool is_in_place(const OpDesc& op, int rank) {
  if (op.send == nullptr || op.recv == nullptr) return false;
  auto send = static_cast<const char*>(op.send);
  auto recv = static_cast<const char*>(op.recv);
  std::size_t element = size_of(op.dtype);
  auto r = static_cast<std::size_t>(rank);
  switch (op.kind) {
    case OpKind::all_reduce:
    case OpKind::broadcast:
    case OpKind::reduce:
      return send == recv;
    case OpKind::reduce_scatter:
    case OpKind::scatter:
      return recv == send + r * op.count * element;
    case OpKind::all_gather:
    case OpKind::gather:
      return send == recv + r * op.count * element;
    case OpKind::all_gather_v:
    case OpKind::gather_v: {
      std::size_t displ = 0;
      if (!op.recv_displs.empty()) {
        displ = at(op.recv_displs, rank);
      } else {
        for (int i = 0; i < rank; ++i) displ += at(op.recv_counts, i);
      }
      return send == recv + displ * element;
    }
    case OpKind::reduce_scatter_v:
    case OpKind::scatter_v: {
      const auto& counts = op.kind == OpKind::scatter_v ? op.send_counts : op.recv_counts;
      std::size_t displ = 0;
      if (!op.send_displs.empty()) {
        displ = at(op.send_displs, rank);
      } else {
        for (int i = 0; i < rank; ++i) displ += at(counts, i);
      }
      return recv == send + displ * element;
    }
    default:
      return false;
  }
}

}  // namespace twinccl
