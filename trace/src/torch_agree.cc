// The PyTorch trace importer's checks that the files are one job (torch_read.h): every
// communicator's collectives in the same order with the same kind, count, dtype and root on every
// member, and every send matched by its receiver's recv. Errors name both files, the ranks, the
// op's position on each and the field.
#include <algorithm>
#include <map>
#include <tuple>

#include "torch_read.h"
#include "twinccl/errors.h"

namespace twinccl::trace::detail {
namespace {

[[noreturn]] void fail(const std::string& what) { throw ConfigError(what); }

const RankSource& file_of(const std::vector<RankSource>& files, int rank) {
  return files.at(static_cast<std::size_t>(rank));
}

std::string who(const RankSource& f) { return f.source + " (rank " + std::to_string(f.rank) + ")"; }

void compare(const Trace& t, const RankSource& a, std::size_t ia, const RankSource& b,
             std::size_t ib) {
  const TraceOp& x = t.ranks[static_cast<std::size_t>(a.rank)].ops[ia];
  const TraceOp& y = t.ranks[static_cast<std::size_t>(b.rank)].ops[ib];
  std::string field, bv, av;  // the first field that differs, b's value, a's value
  auto differs = [&](const char* f, std::string b_value, std::string a_value) {
    field = f;
    bv = std::move(b_value);
    av = std::move(a_value);
  };
  if (x.kind != y.kind)
    differs("kind", std::string(name(y.kind)), std::string(name(x.kind)));
  else if (x.count != y.count)
    differs("count", std::to_string(y.count), std::to_string(x.count));
  else if (x.dtype != y.dtype)
    differs("dtype", std::string(name(y.dtype)), std::string(name(x.dtype)));
  else if (x.root != y.root)
    differs("root", std::to_string(y.root), std::to_string(x.root));
  else if (x.counts != y.counts && x.kind != OpKind::all_to_all_v)
    differs("per-rank counts", std::to_string(y.counts.size()) + " entries",
            std::to_string(x.counts.size()) + " entries");
  if (field.empty()) return;
  fail(who(b) + ": op " + std::to_string(ib) + " (" + op_label(t, y) + "): " + field + " " + bv +
       ", where " + who(a) + " op " + std::to_string(ia) + " has " + av);
}

}  // namespace

// Every communicator's collectives, per member, in order: the same on all members.
void check_collectives(const Trace& t, const std::vector<RankSource>& files) {
  for (std::size_t c = 0; c < t.communicators.size(); ++c) {
    const std::vector<int>& members = t.communicators[c].ranks;
    auto ops_of = [&](int rank) {
      std::vector<std::size_t> idx;
      const RankTrace& rt = t.ranks[static_cast<std::size_t>(rank)];
      for (std::size_t i = 0; i < rt.ops.size(); ++i)
        if (rt.ops[i].comm == static_cast<int>(c) && !is_p2p(rt.ops[i].kind)) idx.push_back(i);
      return idx;
    };
    const int first = members.front();
    const std::vector<std::size_t> ref = ops_of(first);
    const RankSource& a = file_of(files, first);
    for (int m : members) {
      if (m == first) continue;
      const std::vector<std::size_t> got = ops_of(m);
      const RankSource& b = file_of(files, m);
      const std::size_t common = std::min(ref.size(), got.size());
      for (std::size_t k = 0; k < common; ++k) compare(t, a, ref[k], b, got[k]);
      if (got.size() != ref.size()) {
        fail(who(b) + " has " + std::to_string(got.size()) + " collective(s) on comm '" +
             t.communicators[c].name + "', " + who(a) + " has " + std::to_string(ref.size()) +
             ": the files cover different windows of the job (profile the same steps on "
             "every rank)");
      }
    }
  }
}

// Each sender's k-th send to a receiver against the receiver's k-th recv from it.
void check_p2p(const Trace& t, const std::vector<RankSource>& files) {
  std::map<std::tuple<int, int, int, std::uint64_t>, std::pair<int, std::size_t>> sends;
  for (std::size_t r = 0; r < t.ranks.size(); ++r) {
    for (std::size_t i = 0; i < t.ranks[r].ops.size(); ++i) {
      const TraceOp& op = t.ranks[r].ops[i];
      if (op.kind != OpKind::send) continue;
      const int dst = t.communicators[static_cast<std::size_t>(op.comm)]
                          .ranks[static_cast<std::size_t>(op.peer)];
      sends[{op.comm, static_cast<int>(r), dst, op.seq}] = {static_cast<int>(r), i};
    }
  }
  std::size_t recvs = 0;
  for (std::size_t r = 0; r < t.ranks.size(); ++r) {
    for (std::size_t i = 0; i < t.ranks[r].ops.size(); ++i) {
      const TraceOp& op = t.ranks[r].ops[i];
      if (op.kind != OpKind::recv) continue;
      ++recvs;
      const int src = t.communicators[static_cast<std::size_t>(op.comm)]
                          .ranks[static_cast<std::size_t>(op.peer)];
      const RankSource& b = file_of(files, static_cast<int>(r));
      const auto it = sends.find({op.comm, src, static_cast<int>(r), op.seq});
      if (it == sends.end()) {
        fail(who(b) + ": op " + std::to_string(i) + " (" + op_label(t, op) + " from rank " +
             std::to_string(src) + "): " + who(file_of(files, src)) + " has no matching send");
      }
      const TraceOp& s = t.ranks[static_cast<std::size_t>(src)].ops[it->second.second];
      if (s.count != op.count || s.dtype != op.dtype) {
        fail(who(b) + ": op " + std::to_string(i) + " (" + op_label(t, op) + "): count " +
             std::to_string(op.count) + " " + std::string(name(op.dtype)) + ", where " +
             who(file_of(files, src)) + " op " + std::to_string(it->second.second) + " sends " +
             std::to_string(s.count) + " " + std::string(name(s.dtype)));
      }
    }
  }
  if (recvs != sends.size()) {
    for (const auto& entry : sends) {  // no structured binding: clang 14 cannot capture one
      const auto& key = entry.first;
      const auto& where = entry.second;
      const int dst = std::get<2>(key);
      const RankTrace& rt = t.ranks[static_cast<std::size_t>(dst)];
      const bool matched = std::any_of(rt.ops.begin(), rt.ops.end(), [&](const TraceOp& o) {
        return o.kind == OpKind::recv && o.comm == std::get<0>(key) && o.seq == std::get<3>(key) &&
               t.communicators[static_cast<std::size_t>(o.comm)]
                       .ranks[static_cast<std::size_t>(o.peer)] == std::get<1>(key);
      });
      if (!matched) {
        const TraceOp& s = t.ranks[static_cast<std::size_t>(where.first)].ops[where.second];
        fail(who(file_of(files, where.first)) + ": op " + std::to_string(where.second) + " (" +
             op_label(t, s) + " to rank " + std::to_string(dst) + "): " + who(file_of(files, dst)) +
             " has no matching recv");
      }
    }
  }
}

}  // namespace twinccl::trace::detail
