// The cross-rank checks of a trace (trace_analysis.h); the dry run is in trace_dry_run.cc.
//
// How it works. Matching: a collective is keyed (communicator, seq), a send/recv pair
// (communicator, sender, receiver, k); every key gets one slot per comm rank (two for send/recv)
// and every op fills its slot, so a duplicate, a disagreement (kind, count, dtype, root, counts)
// and a missing counterpart are seen with both ranks named. Order: every rank's collectives of a
// communicator, in issue order, are compared with its comm rank 0's (rank 0 runs all_reduce #0
// then all_gather #1, rank 1 the reverse: refused here, with both ops named). Batches: per rank,
// one per op, or per group and communicator, chained per communicator as replay's streams (send/
// recv per (peer, direction) with Trace::p2p_per_peer_streams: stream_of); the dry run then finds
// what the other checks cannot see (a deadlock across communicators or between blocking sends).
#include "trace_analysis.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "twinccl/errors.h"

namespace twinccl::sim::detail {
namespace {

struct Key {
  int comm;
  int src, dst;  // send/recv: comm ranks; collectives: -1
  std::uint64_t seq;
  auto operator<=>(const Key&) const = default;
};

class Analysis {
 public:
  Analysis(const Trace& t, std::string_view source,
           const std::vector<std::vector<std::pair<int, int>>>& membership)
      : t_(t), source_(source), membership_(membership) {}

  MatchedTrace run() {
    index_members();
    match();
    check_order();
    build_batches();
    dry_run(t_, source_, m_);
    return std::move(m_);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw ConfigError(std::string(source_) + ": " + what);
  }

  // Where communicator `comm` is in rank r's membership list (check_trace made sure it is).
  std::size_t entry(int r, int comm) const {
    const auto& list = membership_[static_cast<std::size_t>(r)];
    return static_cast<std::size_t>(
        std::lower_bound(list.begin(), list.end(), std::make_pair(comm, -1)) - list.begin());
  }
  int comm_rank(int r, int comm) const {
    return membership_[static_cast<std::size_t>(r)][entry(r, comm)].second;
  }
  const TraceOp& op_of(int m) const { return m_.op_of(t_, m); }
  std::string label(int m) const { return op_label(t_, op_of(m)); }
  std::string at(int m) const {
    const int r = m_.rank_of[static_cast<std::size_t>(m)];
    return "ranks[" + std::to_string(r) + "].ops[" +
           std::to_string(m - m_.base[static_cast<std::size_t>(r)]) + "]";
  }

  void index_members() {
    for (int r = 0; r < t_.world_size(); ++r) {
      m_.base.push_back(static_cast<int>(m_.rank_of.size()));
      m_.rank_of.insert(m_.rank_of.end(), t_.ranks[static_cast<std::size_t>(r)].ops.size(), r);
    }
    m_.instance_of.assign(m_.rank_of.size(), -1);
  }

  void match() {
    std::map<Key, int> index;
    for (int m = 0; m < static_cast<int>(m_.rank_of.size()); ++m) {
      const TraceOp& op = op_of(m);
      const int me = comm_rank(m_.rank_of[static_cast<std::size_t>(m)], op.comm);
      Key key{op.comm, -1, -1, op.seq};
      if (op.kind == OpKind::send) key = {op.comm, me, op.peer, op.seq};
      if (op.kind == OpKind::recv) key = {op.comm, op.peer, me, op.seq};
      auto [it, fresh] = index.try_emplace(key, static_cast<int>(m_.slots.size()));
      if (fresh) {
        const std::size_t n =
            is_p2p(op.kind) ? 2 : t_.communicators[static_cast<std::size_t>(op.comm)].ranks.size();
        m_.slots.emplace_back(n, -1);
      }
      std::vector<int>& slots = m_.slots[static_cast<std::size_t>(it->second)];
      const int slot = is_p2p(op.kind) ? (op.kind == OpKind::send ? 0 : 1) : me;
      for (int other : slots) {
        if (other >= 0) {
          check_agree(other, m);
          break;
        }
      }
      int& filled = slots[static_cast<std::size_t>(slot)];
      if (filled >= 0) {
        fail(at(m) + ": rank " + std::to_string(m_.rank_of[static_cast<std::size_t>(m)]) +
             " issues " + label(m) + " twice (also " + at(filled) + ")");
      }
      filled = m;
      m_.instance_of[static_cast<std::size_t>(m)] = it->second;
    }
    for (const std::vector<int>& slots : m_.slots) check_complete(slots);
  }

  void check_agree(int a, int b) const {
    const TraceOp& x = op_of(a);
    const TraceOp& y = op_of(b);
    const bool pair = is_p2p(x.kind) && is_p2p(y.kind) && x.kind != y.kind;
    std::string what;
    if (x.kind != y.kind && !pair)
      what = "kind " + std::string(name(y.kind)) + " vs " + std::string(name(x.kind));
    else if (x.count != y.count)
      what = "count=" + std::to_string(y.count) + " vs " + std::to_string(x.count);
    else if (x.dtype != y.dtype)
      what = "dtype " + std::string(name(y.dtype)) + " vs " + std::string(name(x.dtype));
    else if (is_rooted(x.kind) && x.root != y.root)
      what = "root=" + std::to_string(y.root) + " vs " + std::to_string(x.root);
    else if (x.counts != y.counts && x.kind != OpKind::all_to_all_v)
      what = "different per-rank counts";
    if (!what.empty()) {
      fail(label(a) + ": rank " + std::to_string(m_.rank_of[static_cast<std::size_t>(b)]) + " (" +
           at(b) + ") and rank " + std::to_string(m_.rank_of[static_cast<std::size_t>(a)]) + " (" +
           at(a) + ") disagree: " + what);
    }
  }

  void check_complete(const std::vector<int>& slots) const {
    const int first = *std::find_if(slots.begin(), slots.end(), [](int s) { return s >= 0; });
    const TraceOp& op = op_of(first);
    const TraceCommunicator& comm = t_.communicators[static_cast<std::size_t>(op.comm)];
    std::string missing;
    int listed = 0, more = 0;
    for (std::size_t s = 0; s < slots.size(); ++s) {
      if (slots[s] >= 0) continue;
      if (is_p2p(op.kind)) {
        const int peer_world = comm.ranks[static_cast<std::size_t>(op.peer)];
        missing = "rank " + std::to_string(peer_world) + " never issues the matching " +
                  (s == 0 ? "send" : "recv");
      } else if (listed < 8) {
        missing += (listed++ == 0 ? "rank " : ", ") + std::to_string(comm.ranks[s]);
      } else {
        ++more;
      }
    }
    if (missing.empty()) return;
    if (!is_p2p(op.kind)) {
      missing += (more > 0 ? " and " + std::to_string(more) + " more" : std::string()) +
                 (listed + more > 1 ? " never issue it" : " never issues it");
    }
    fail(label(first) + " (" + at(first) + ", rank " +
         std::to_string(m_.rank_of[static_cast<std::size_t>(first)]) +
         ") has no counterpart: " + missing);
  }

  // Every rank issues a communicator's collectives in the order its comm rank 0 does.
  void check_order() const {
    std::vector<std::vector<int>> reference(t_.communicators.size());
    for (int pass = 0; pass < 2; ++pass) {
      for (int r = 0; r < t_.world_size(); ++r) {
        const RankTrace& rt = t_.ranks[static_cast<std::size_t>(r)];
        std::vector<std::size_t> position(membership_[static_cast<std::size_t>(r)].size(),
                                          0);  // per communicator
        for (std::size_t e = 0; e < rt.events.size(); ++e) {
          if (rt.events[e].kind != TraceEventKind::op) continue;
          const int m = m_.base[static_cast<std::size_t>(r)] + rt.events[e].op;
          const TraceOp& op = op_of(m);
          if (is_p2p(op.kind)) continue;
          const auto c = static_cast<std::size_t>(op.comm);
          const int inst = m_.instance_of[static_cast<std::size_t>(m)];
          if (pass == 0) {
            if (comm_rank(r, op.comm) == 0) reference[c].push_back(inst);
            continue;
          }
          const std::size_t k = position[entry(r, op.comm)]++;
          const int expected = m_.slots[static_cast<std::size_t>(reference[c][k])]
                                       [static_cast<std::size_t>(comm_rank(r, op.comm))];
          if (reference[c][k] != inst) {
            const int zero = t_.communicators[c].ranks[0];
            fail("ranks[" + std::to_string(r) + "].events[" + std::to_string(e) + "]: rank " +
                 std::to_string(r) + " issues " + label(m) + " as its collective number " +
                 std::to_string(k) +
                 " on that communicator, "
                 "where rank " +
                 std::to_string(zero) + " issues " + label(expected) +
                 "; every rank must issue a "
                 "communicator's collectives in the same order");
          }
        }
      }
    }
  }

  void build_batches() {
    m_.batch_of.assign(m_.rank_of.size(), -1);
    for (int r = 0; r < t_.world_size(); ++r) {
      const RankTrace& rt = t_.ranks[static_cast<std::size_t>(r)];
      std::map<StreamKey, int> last;                  // stream -> its last batch
      std::map<std::pair<int, int>, int> open_group;  // (comm, group) -> batch
      for (const TraceEvent& e : rt.events) {
        if (e.kind != TraceEventKind::op) continue;
        const int m = m_.base[static_cast<std::size_t>(r)] + e.op;
        const TraceOp& op = op_of(m);
        const bool grouped = op.group > 0 && !own_batch_in_group(t_, op);
        const auto group = open_group.find({op.comm, op.group});
        int b = grouped && group != open_group.end() ? group->second : -1;
        if (b < 0) {
          b = static_cast<int>(m_.batches.size());
          m_.batches.push_back({});
          const StreamKey stream = stream_of(t_, op);
          const auto prev = last.find(stream);
          if (prev != last.end()) {
            m_.batches.back().previous = prev->second;
            m_.batches[static_cast<std::size_t>(prev->second)].next = b;
          }
          last[stream] = b;
          if (grouped) open_group[{op.comm, op.group}] = b;
        }
        m_.batches[static_cast<std::size_t>(b)].members.push_back(m);
        m_.batch_of[static_cast<std::size_t>(m)] = b;
      }
    }
  }

  const Trace& t_;
  std::string_view source_;
  const std::vector<std::vector<std::pair<int, int>>>& membership_;
  MatchedTrace m_;
};

}  // namespace

bool own_batch_in_group(const Trace& trace, const TraceOp& op) {
  return trace.p2p_per_peer_streams && is_p2p(op.kind);
}

StreamKey stream_of(const Trace& trace, const TraceOp& op) {
  if (!own_batch_in_group(trace, op)) return {op.comm, -1, 0};
  return {op.comm, op.peer, op.kind == OpKind::send ? 1 : 2};
}

MatchedTrace check_trace_consistency(
    const Trace& trace, std::string_view source,
    const std::vector<std::vector<std::pair<int, int>>>& membership) {
  return Analysis(trace, source, membership).run();
}

}  // namespace twinccl::sim::detail
