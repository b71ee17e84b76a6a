// PyTorch profiler traces of one job -> one twinccl-trace (torch_import.h, docs/traces.md).
//
// How it works. Each file is read (torch_read.cc: the calls and the GPU timeline); the files must
// name every rank of one world once. Each call becomes an op (torch_ops.cc) on the communicator of
// its process group: the members are "Process Group Ranks", or the world when that list is absent
// or cut short and the group is the whole world, or "Global rank start/stride". Collectives are
// numbered per rank and communicator, send/recv per (sender, receiver); the GPU timeline gives
// the events (torch_timeline.cc). Then every communicator's collectives are compared across its
// members (same number, and per position the same kind, count, dtype and root), and every
// sender's sends against its receiver's recvs, so a mismatch is reported with both files.
#include "twinccl/trace/torch_import.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

#include "torch_read.h"
#include "twinccl/errors.h"

namespace twinccl::trace {
namespace {

using detail::TorchRankFile;

[[noreturn]] void fail(const std::string& what) { throw ConfigError(what); }

std::string who(const TorchRankFile& f) {
  return f.source + " (rank " + std::to_string(f.rank) + ")";
}

std::string label(const Trace& t, const TraceOp& op) {
  return std::string(name(op.kind)) + " #" + std::to_string(op.seq) + " on comm '" +
         t.communicators[static_cast<std::size_t>(op.comm)].name + "'";
}

// The world ranks of the call's process group (see the file comment).
std::vector<int> members_of(const detail::TorchCommCall& c, int world, const std::string& where) {
  std::vector<int> ranks;
  if (c.pg_ranks_known) {
    ranks = c.pg_ranks;
  } else if (c.group_size < 0 || c.group_size == world) {
    ranks.resize(static_cast<std::size_t>(world));
    std::iota(ranks.begin(), ranks.end(), 0);
  } else if (c.global_start >= 0 && c.global_stride > 0 && c.group_size > 0) {
    for (std::int64_t i = 0; i < c.group_size; ++i) {
      const std::int64_t r = c.global_start + i * c.global_stride;
      if (r >= world)
        fail(where + ": 'Global rank start/stride' name rank " + std::to_string(r) +
             ", outside the world of " + std::to_string(world));
      ranks.push_back(static_cast<int>(r));
    }
  } else {
    fail(where + ": the members of process group '" + c.pg_name + "' (" +
         std::to_string(c.group_size) + " of " + std::to_string(world) +
         " ranks) are unknown: 'Process Group Ranks' is absent or cut short and there is no "
         "'Global rank start/stride'");
  }
  if (c.group_size >= 0 && c.group_size != static_cast<std::int64_t>(ranks.size())) {
    fail(where + ": 'Group size' is " + std::to_string(c.group_size) +
         " but 'Process Group Ranks' lists " + std::to_string(ranks.size()) + " ranks");
  }
  std::vector<char> seen(static_cast<std::size_t>(world), 0);
  for (int r : ranks) {
    if (r < 0 || r >= world || seen[static_cast<std::size_t>(r)]++) {
      fail(where + ": 'Process Group Ranks' lists rank " + std::to_string(r) +
           (r >= world ? " outside the world of " + std::to_string(world) : " twice"));
    }
  }
  return ranks;
}

class Importer {
 public:
  explicit Importer(std::vector<TorchRankFile> files) : files_(std::move(files)) {}

  TorchImport run(const std::string& program) {
    out_.trace.program = program;
    out_.trace.p2p_per_peer_streams = true;  // ProcessGroupNCCL: a stream per p2p peer pair
    out_.trace.ranks.resize(files_.size());
    for (const TorchRankFile& f : files_) convert(f);
    check_collectives();
    check_p2p();
    for (const auto& [what, n] : skipped_)
      out_.notes.push_back("skipped " + std::to_string(n) + " call(s) named '" + what + "'" +
                           (what == "wait" ? " (Work.wait(): waits come from the GPU timeline)"
                                           : " (not an operation TwinCCL replays)"));
    if (roots_assumed_ > 0)
      out_.notes.push_back(std::to_string(roots_assumed_) +
                           " rooted call(s) did not record their root ('Rank'): root 0 assumed");
    if (without_kernel_ > 0)
      out_.notes.push_back(std::to_string(without_kernel_) +
                           " op(s) had no NCCL kernel in the trace: timed at their CPU call, "
                           "no overlap with compute taken over");
    return std::move(out_);
  }

 private:
  int comm_index(const detail::TorchCommCall& c, const std::vector<int>& ranks) {
    const auto key = std::make_pair(c.pg_name, ranks);
    const auto it = comms_.find(key);
    if (it != comms_.end()) return it->second;
    if (out_.trace.communicators.size() >= kMaxTraceCommunicators)
      fail("more than " + std::to_string(kMaxTraceCommunicators) + " process groups");
    std::string label = !c.pg_desc.empty()   ? c.pg_desc
                        : !c.pg_name.empty() ? "pg " + c.pg_name
                                             : "world";
    const int index = static_cast<int>(out_.trace.communicators.size());
    out_.trace.communicators.push_back({std::move(label), ranks});
    comms_.emplace(key, index);
    return index;
  }

  void convert(const TorchRankFile& f) {
    const int world = static_cast<int>(files_.size());
    RankTrace& rt = out_.trace.ranks[static_cast<std::size_t>(f.rank)];
    std::vector<std::size_t> call_of_op;
    std::map<int, std::uint64_t> collective_seq;
    std::map<std::tuple<int, int, int>, std::uint64_t> p2p_seq;  // (comm, src, dst)
    for (std::size_t i = 0; i < f.calls.size(); ++i) {
      const detail::TorchCommCall& c = f.calls[i];
      const std::string where = f.source + ": traceEvents[" + std::to_string(c.event) + "] (" +
                                c.collective.substr(0, 40) + ")";
      if (c.collective == "wait") {
        ++skipped_["wait"];
        continue;
      }
      const std::vector<int> ranks = members_of(c, world, where);
      const auto mine = std::find(ranks.begin(), ranks.end(), f.rank);
      if (mine == ranks.end()) {
        fail(where + ": this file is rank " + std::to_string(f.rank) +
             ", which is not in the call's process group");
      }
      const int me = static_cast<int>(mine - ranks.begin());
      TraceOp op;
      std::string skipped;
      bool root_assumed = false;
      if (!detail::op_of_call(c, ranks, me, where, op, skipped, root_assumed)) {
        ++skipped_[skipped.substr(0, 40)];
        continue;
      }
      if (root_assumed) ++roots_assumed_;
      op.comm = comm_index(c, ranks);
      if (is_p2p(op.kind)) {
        const int src = op.kind == OpKind::send ? me : op.peer;
        const int dst = op.kind == OpKind::send ? op.peer : me;
        op.seq = p2p_seq[{op.comm, src, dst}]++;
      } else {
        op.seq = collective_seq[op.comm]++;
      }
      rt.ops.push_back(std::move(op));
      call_of_op.push_back(i);
    }
    std::vector<detail::OpTimes> times;
    rt.events = detail::timeline_events(f, call_of_op, times);
    double t0 = 0;
    if (!times.empty()) t0 = times.front().issue_us;
    for (std::size_t i = 0; i < rt.ops.size(); ++i) {
      rt.ops[i].async = times[i].has_kernel;  // its kernel ran on a stream of its own
      rt.ops[i].issue_s = std::min((times[i].issue_us - t0) * 1e-6, kMaxTraceWallSeconds);
      rt.ops[i].complete_s = std::min((times[i].done_us - t0) * 1e-6, kMaxTraceWallSeconds);
      if (!times[i].has_kernel) ++without_kernel_;
    }
  }

  // Every communicator's collectives, per member, in order: the same on all members.
  void check_collectives() const {
    const Trace& t = out_.trace;
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
      const TorchRankFile& a = file_of(first);
      for (int m : members) {
        if (m == first) continue;
        const std::vector<std::size_t> got = ops_of(m);
        const TorchRankFile& b = file_of(m);
        const std::size_t common = std::min(ref.size(), got.size());
        for (std::size_t k = 0; k < common; ++k) compare(a, ref[k], b, got[k]);
        if (got.size() != ref.size()) {
          fail(who(b) + " has " + std::to_string(got.size()) + " collective(s) on comm '" +
               t.communicators[c].name + "', " + who(a) + " has " + std::to_string(ref.size()) +
               ": the files cover different windows of the job (profile the same steps on "
               "every rank)");
        }
      }
    }
  }

  void compare(const TorchRankFile& a, std::size_t ia, const TorchRankFile& b,
               std::size_t ib) const {
    const Trace& t = out_.trace;
    const TraceOp& x = t.ranks[static_cast<std::size_t>(a.rank)].ops[ia];
    const TraceOp& y = t.ranks[static_cast<std::size_t>(b.rank)].ops[ib];
    std::string field, bv, av;
    if (x.kind != y.kind) {
      field = "kind";
      bv = name(y.kind);
      av = name(x.kind);
    } else if (x.count != y.count) {
      field = "count";
      bv = std::to_string(y.count);
      av = std::to_string(x.count);
    } else if (x.dtype != y.dtype) {
      field = "dtype";
      bv = name(y.dtype);
      av = name(x.dtype);
    } else if (x.root != y.root) {
      field = "root";
      bv = std::to_string(y.root);
      av = std::to_string(x.root);
    } else if (x.counts != y.counts && x.kind != OpKind::all_to_all_v) {
      field = "per-rank counts";
      bv = std::to_string(y.counts.size()) + " entries";
      av = std::to_string(x.counts.size()) + " entries";
    }
    if (field.empty()) return;
    fail(who(b) + ": op " + std::to_string(ib) + " (" + label(t, y) + "): " + field + " " + bv +
         ", where " + who(a) + " op " + std::to_string(ia) + " has " + av);
  }

  // Each sender's k-th send to a receiver against the receiver's k-th recv from it.
  void check_p2p() const {
    const Trace& t = out_.trace;
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
        const TorchRankFile& b = file_of(static_cast<int>(r));
        const auto it = sends.find({op.comm, src, static_cast<int>(r), op.seq});
        if (it == sends.end()) {
          fail(who(b) + ": op " + std::to_string(i) + " (" + label(t, op) + " from rank " +
               std::to_string(src) + "): " + who(file_of(src)) + " has no matching send");
        }
        const TraceOp& s = t.ranks[static_cast<std::size_t>(src)].ops[it->second.second];
        if (s.count != op.count || s.dtype != op.dtype) {
          fail(who(b) + ": op " + std::to_string(i) + " (" + label(t, op) + "): count " +
               std::to_string(op.count) + " " + std::string(name(op.dtype)) + ", where " +
               who(file_of(src)) + " op " + std::to_string(it->second.second) + " sends " +
               std::to_string(s.count) + " " + std::string(name(s.dtype)));
        }
      }
    }
    if (recvs != sends.size()) {
      for (const auto& [key, where] : sends) {
        const int dst = std::get<2>(key);
        const RankTrace& rt = t.ranks[static_cast<std::size_t>(dst)];
        const bool matched = std::any_of(rt.ops.begin(), rt.ops.end(), [&](const TraceOp& o) {
          return o.kind == OpKind::recv && o.comm == std::get<0>(key) &&
                 o.seq == std::get<3>(key) &&
                 t.communicators[static_cast<std::size_t>(o.comm)]
                         .ranks[static_cast<std::size_t>(o.peer)] == std::get<1>(key);
        });
        if (!matched) {
          const TraceOp& s = t.ranks[static_cast<std::size_t>(where.first)].ops[where.second];
          fail(who(file_of(where.first)) + ": op " + std::to_string(where.second) + " (" +
               label(t, s) + " to rank " + std::to_string(dst) + "): " + who(file_of(dst)) +
               " has no matching recv");
        }
      }
    }
  }

  const TorchRankFile& file_of(int rank) const { return files_[static_cast<std::size_t>(rank)]; }

  std::vector<TorchRankFile> files_;  // indexed by rank
  TorchImport out_;
  std::map<std::pair<std::string, std::vector<int>>, int> comms_;
  std::map<std::string, std::size_t> skipped_;
  std::size_t roots_assumed_ = 0, without_kernel_ = 0;
};

}  // namespace

TorchImport import_torch_traces(const std::vector<TorchTraceText>& files,
                                const std::string& program) {
  if (files.empty()) fail("import: no profiler trace given (one file per rank)");
  if (files.size() > kMaxTorchTraceFiles) {
    fail("import: " + std::to_string(files.size()) + " files is over the cap of " +
         std::to_string(kMaxTorchTraceFiles) + " ranks");
  }
  if (program.size() > kMaxTraceProgramBytes) fail("import: the program text is too long");
  std::vector<TorchRankFile> by_rank;
  for (const TorchTraceText& f : files) {
    TorchRankFile r = detail::read_torch_rank(f.source, f.text);
    if (!by_rank.empty() && r.world_size != by_rank.front().world_size) {
      fail(r.source + ": distributedInfo.world_size is " + std::to_string(r.world_size) +
           ", where " + by_rank.front().source + " has " +
           std::to_string(by_rank.front().world_size) + ": the files are not one job");
    }
    for (const TorchRankFile& other : by_rank) {
      if (other.rank == r.rank) {
        fail(r.source + ": distributedInfo.rank is " + std::to_string(r.rank) + ", as in " +
             other.source + ": each rank's file must be given once");
      }
    }
    by_rank.push_back(std::move(r));
  }
  const int world = by_rank.front().world_size;
  if (static_cast<int>(by_rank.size()) != world) {
    std::string missing;
    int listed = 0;
    for (int r = 0; r < world && listed < 8; ++r) {
      const bool have = std::any_of(by_rank.begin(), by_rank.end(),
                                    [&](const TorchRankFile& f) { return f.rank == r; });
      if (!have) missing += (listed++ > 0 ? ", " : "") + std::to_string(r);
    }
    fail("import: the job has " + std::to_string(world) +
         " ranks (distributedInfo.world_size) "
         "but " +
         std::to_string(by_rank.size()) + " file(s) were given; missing rank(s) " + missing +
         (world - static_cast<int>(by_rank.size()) > listed ? ", ..." : ""));
  }
  std::sort(by_rank.begin(), by_rank.end(),
            [](const TorchRankFile& a, const TorchRankFile& b) { return a.rank < b.rank; });
  return Importer(std::move(by_rank)).run(program);
}

}  // namespace twinccl::trace
