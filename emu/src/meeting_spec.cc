// Builds the CollectiveSpec from every rank's call and refuses calls that disagree, or whose
// ranks share buffers (found by the last rank to arrive: shared_buffers.h).
#include <functional>
#include <map>
#include <string>

#include "executor.h"
#include "twinccl/errors.h"
#include "twinccl/op_traits.h"

namespace twinccl::emu {
namespace {

// "rank 0 (a.cc:3) passed 1024; ranks 1-3 (b.cc:9) passed 2048"
template <class Key>
std::string who_passed(const Meeting& m, const std::function<Key(const OpDesc&)>& key,
                       const std::function<std::string(const Key&)>& show) {
  std::map<Key, std::vector<int>> groups;
  for (int r = 0; r < m.nranks; ++r) groups[key(m.ops[static_cast<std::size_t>(r)])].push_back(r);
  std::string out;
  for (const auto& [value, ranks] : groups) {
    std::string list;
    for (std::size_t i = 0; i < ranks.size(); ++i) {
      std::size_t j = i;
      while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
      list += (list.empty() ? "" : ",") + std::to_string(ranks[i]) +
              (j > i ? "-" + std::to_string(ranks[j]) : "");
      i = j;
    }
    const OpDesc& first = m.ops[static_cast<std::size_t>(ranks.front())];
    out += (out.empty() ? "" : "; ") + std::string(ranks.size() == 1 ? "rank " : "ranks ") + list +
           " (" + describe_call_site(first.where) + ") passed " + show(value);
  }
  return out;
}

template <class Key>
void agree(const Meeting& m, const char* what, const std::function<Key(const OpDesc&)>& key,
           const std::function<std::string(const Key&)>& show, const char* hint = "") {
  const Key first = key(m.ops[0]);
  for (int r = 1; r < m.nranks; ++r) {
    if (!(key(m.ops[static_cast<std::size_t>(r)]) == first)) {
      throw MismatchError(m.label() + ": ranks disagree on " + what + ": " +
                          who_passed<Key>(m, key, show) + hint);
    }
  }
}

std::string show_size(const std::size_t& v) { return std::to_string(v); }
std::string show_int(const int& v) { return std::to_string(v); }
std::string show_vector(const std::vector<std::size_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size() && i < 16; ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + (v.size() > 16 ? ",...]" : "]");
}

// split() meets as a barrier: the call's name tells them apart (and any other op kind).
void agree_on_call(const Meeting& m) {
  for (int r = 1; r < m.nranks; ++r) {
    if (m.calls[static_cast<std::size_t>(r)] != m.calls[0]) {
      std::string list;
      for (int q = 0; q < m.nranks; ++q) {
        const OpDesc& o = m.ops[static_cast<std::size_t>(q)];
        list += (q ? "; " : "") + std::string("rank ") + std::to_string(q) + " (" +
                describe_call_site(o.where) + ") called " +
                std::string(m.calls[static_cast<std::size_t>(q)]);
      }
      throw MismatchError(
          m.label() + ": ranks disagree on the operation: " + list +
          " (every rank must issue the same operations on a communicator in the same order)");
    }
  }
}

}  // namespace

CollectiveSpec spec_from_meeting(const Meeting& m) {
  const OpDesc& op0 = m.ops[0];
  agree_on_call(m);
  agree<std::string>(
      m, "the operation", [](const OpDesc& o) { return std::string(name(o.kind)); },
      [](const std::string& s) { return s; },
      " (every rank must issue the same operations on a communicator in the same order)");
  agree<std::string>(
      m, "the data type", [](const OpDesc& o) { return std::string(name(o.dtype)); },
      [](const std::string& s) { return s; });
  if (is_reducing(op0.kind)) {
    agree<std::string>(
        m, "the reduce op", [](const OpDesc& o) { return std::string(name(o.op.kind)); },
        [](const std::string& s) { return s; });
  }
  if (is_rooted(op0.kind))
    agree<int>(
        m, "root", [](const OpDesc& o) { return o.root; }, show_int);
  agree<std::string>(
      m, "the algorithm", [](const OpDesc& o) { return o.algorithm; },
      [](const std::string& s) { return s.empty() ? std::string("(default)") : "'" + s + "'"; });

  using Vec = std::vector<std::size_t>;
  const OpTraits& t = traits(op0.kind);
  if (!t.uneven) {
    agree<std::size_t>(
        m, "count", [](const OpDesc& o) { return o.count; }, show_size);
  } else if (t.counts != CountsIn::each_side) {  // one counts vector, displacements on one side
    const Side side = t.input.holds(Elements::blocks) ? Side::input : Side::output;
    agree<Vec>(
        m, "counts", [side](const OpDesc& o) { return block_vectors(o, side).counts; },
        show_vector);
    agree<Vec>(
        m, side == Side::input ? "send displacements" : "recv displacements",
        [side](const OpDesc& o) { return block_vectors(o, side).displs; }, show_vector);
  }
  CollectiveSpec spec = spec_of(op0, m.nranks);
  if (op0.kind == OpKind::all_to_all_v) {
    auto n = static_cast<std::size_t>(m.nranks);
    spec.matrix.resize(n * n);
    spec.send_displs.resize(n * n);
    spec.recv_displs.resize(n * n);
    for (std::size_t src = 0; src < n; ++src) {
      const OpDesc& o = m.ops[src];
      Vec sd = o.send_displs.empty() ? packed_displs(o.send_counts) : o.send_displs;
      Vec rd = o.recv_displs.empty() ? packed_displs(o.recv_counts) : o.recv_displs;
      for (std::size_t dst = 0; dst < n; ++dst) {
        spec.matrix[src * n + dst] = o.send_counts[dst];
        spec.send_displs[src * n + dst] = sd[dst];
        spec.recv_displs[src * n + dst] = rd[dst];
        std::size_t expected = m.ops[dst].recv_counts[src];
        if (o.send_counts[dst] != expected) {
          throw MismatchError(
              m.label() + ": rank " + std::to_string(src) + " (" + describe_call_site(o.where) +
              ") sends " + std::to_string(o.send_counts[dst]) + " elements to rank " +
              std::to_string(dst) + " but rank " + std::to_string(dst) + " (" +
              describe_call_site(m.ops[dst].where) + ") expects " + std::to_string(expected));
        }
      }
    }
  }
  if (m.shared_buffers)
    throw InvalidArgument(shared_buffers_text(m.label(), m.ops, m.shared_buffers));
  return spec;
}

}  // namespace twinccl::emu
