// Checker: agents, facts and wait registration; the cycle search is in deadlock_search.cc.
#include "checker.h"

#include "twinccl/errors.h"
#include "twinccl/operation.h"

namespace twinccl::emu {

Checker::Checker(int world_size)
    : streams_of_rank_(static_cast<std::size_t>(world_size)),
      finished_(static_cast<std::size_t>(world_size), 0) {
  for (int r = 0; r < world_size; ++r) {
    Agent& a = agents_.emplace_back();
    a.id = r;
    a.global_rank = r;
    users_.push_back(&a);
    nodes_.emplace_back();
  }
}

CommRecord* Checker::add_comm(std::string name, std::vector<int> global_ranks, bool p2p_lanes) {
  auto record = std::make_unique<CommRecord>();
  record->p2p_lanes = p2p_lanes;
  record->name = std::move(name);
  record->agents.assign(global_ranks.size(), -1);
  record->global_ranks = std::move(global_ranks);
  std::lock_guard<std::mutex> lock(mu_);
  comms_.push_back(std::move(record));
  return comms_.back().get();
}

Agent& Checker::add_agent_locked(CommRecord* comm, int comm_rank) {
  Agent& a = agents_.emplace_back();
  a.id = static_cast<int>(agents_.size()) - 1;
  a.global_rank = comm->global_ranks[static_cast<std::size_t>(comm_rank)];
  a.comm = comm;
  streams_of_rank_[static_cast<std::size_t>(a.global_rank)].push_back(a.id);
  nodes_.emplace_back();
  return a;
}

Agent* Checker::add_stream(CommRecord* comm, int comm_rank) {
  std::lock_guard<std::mutex> lock(mu_);
  Agent& a = add_agent_locked(comm, comm_rank);
  comm->agents[static_cast<std::size_t>(comm_rank)] = a.id;
  return &a;
}

Agent* Checker::add_lane(CommRecord* comm, int comm_rank, int peer, bool sends) {
  std::lock_guard<std::mutex> lock(mu_);
  Agent& a = add_agent_locked(comm, comm_rank);
  comm->lanes[{comm_rank, peer, sends}] = a.id;
  return &a;
}

void Checker::mark_finished(int global_rank) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!finished_[static_cast<std::size_t>(global_rank)]) ++finished_count_;
  finished_[static_cast<std::size_t>(global_rank)] = 1;
}

std::uint64_t Checker::posted(CommRecord* comm, int sender, int receiver) {
  std::lock_guard<std::mutex> lock(mu_);
  return ++comm->p2p[{sender, receiver}].first;
}

void Checker::consumed(CommRecord* comm, int sender, int receiver) {
  std::lock_guard<std::mutex> lock(mu_);
  ++comm->p2p[{sender, receiver}].second;
}

std::uint64_t Checker::posts_so_far(CommRecord* comm, int sender, int receiver) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = comm->p2p.find({sender, receiver});
  return it == comm->p2p.end() ? 0 : it->second.first;
}

int Checker::target_for(const CommRecord& comm, int comm_rank) const {
  int stream = comm.agents[static_cast<std::size_t>(comm_rank)];
  if (stream >= 0) {
    const Agent& a = agents_[static_cast<std::size_t>(stream)];
    if (a.issued.load() > a.completed.load()) return stream;  // its stream has queued work first
  }
  return comm.global_ranks[static_cast<std::size_t>(comm_rank)];  // the rank's own thread
}

int Checker::p2p_target(const CommRecord& comm, int comm_rank, int peer, bool sends) const {
  if (!comm.p2p_lanes) return target_for(comm, comm_rank);  // send/recv run on its stream
  auto it = comm.lanes.find({comm_rank, peer, sends});
  if (it != comm.lanes.end()) {
    const Agent& a = agents_[static_cast<std::size_t>(it->second)];
    if (a.issued.load() > a.completed.load()) return it->second;
  }
  // Its main stream's queued collectives do not hold its send/recv back: its thread must issue it.
  return comm.global_ranks[static_cast<std::size_t>(comm_rank)];
}

void Checker::edges_of(int node, std::vector<Edge>& out) {
  out.clear();
  const Agent& a = agents_[static_cast<std::size_t>(node)];
  const Node& n = nodes_[static_cast<std::size_t>(node)];
  if (a.comm == nullptr) {  // a rank's own thread
    if (finished_[static_cast<std::size_t>(a.global_rank)]) return;
    if (n.waiting && n.site.kind == WaitKind::work &&
        n.site.target->completed.load() < n.site.task) {
      out.push_back({n.site.target->id, a.global_rank, "to complete"});
    }
    for (int s : streams_of_rank_[static_cast<std::size_t>(a.global_rank)]) {
      const Node& sn = nodes_[static_cast<std::size_t>(s)];
      if (sn.waiting && sn.site.on_user_thread) out.push_back({s, a.global_rank, "inline"});
    }
    return;
  }
  if (!n.waiting) return;
  const CommRecord& c = *a.comm;
  const WaitSite& w = n.site;
  auto peer_global = [&](int q) { return c.global_ranks[static_cast<std::size_t>(q)]; };
  switch (w.kind) {
    case WaitKind::collective:
      for (int q = 0; q < static_cast<int>(c.global_ranks.size()); ++q) {
        if (q == w.rank) continue;
        int aq = c.agents[static_cast<std::size_t>(q)];
        bool arrived = aq >= 0 && agents_[static_cast<std::size_t>(aq)].arrived.load() > w.seq;
        if (!arrived) out.push_back({target_for(c, q), peer_global(q), "to arrive"});
      }
      break;
    case WaitKind::recv: {
      auto it = c.p2p.find({w.peer, w.rank});
      std::uint64_t posted = it == c.p2p.end() ? 0 : it->second.first;
      std::uint64_t taken = it == c.p2p.end() ? 0 : it->second.second;
      if (posted <= taken)
        out.push_back({p2p_target(c, w.peer, w.rank, true), peer_global(w.peer), "to send"});
      break;
    }
    case WaitKind::send: {
      auto it = c.p2p.find({w.rank, w.peer});
      std::uint64_t taken = it == c.p2p.end() ? 0 : it->second.second;
      if (taken < w.seq)
        out.push_back({p2p_target(c, w.peer, w.rank, false), peer_global(w.peer), "to receive"});
      break;
    }
    default:
      break;
  }
}

std::string Checker::who(const CommRecord* comm, int comm_rank) const {
  int g = comm->global_ranks[static_cast<std::size_t>(comm_rank)];
  bool world_like = comm->global_ranks.size() == users_.size() && g == comm_rank;
  return "rank " + std::to_string(g) +
         (world_like ? "" : " (rank " + std::to_string(comm_rank) + " of '" + comm->name + "')");
}

std::string Checker::describe_step(int node, const Edge& edge) const {
  const Agent& a = agents_[static_cast<std::size_t>(node)];
  const WaitSite& w = nodes_[static_cast<std::size_t>(node)].site;
  std::string site = " (" + describe_call_site(w.where) + ")";
  std::string peer = "rank " + std::to_string(edge.peer_global);
  if (a.comm == nullptr) {
    const CommRecord* c = w.target->comm;
    return "rank " + std::to_string(a.global_rank) + " waits for its async " + std::string(w.op) +
           (w.seq ? " #" + std::to_string(w.seq - 1) : std::string()) + " on comm '" + c->name +
           "'" + site + " to complete";
  }
  std::string me = who(a.comm, w.rank);
  std::string on = " on comm '" + a.comm->name + "'";
  switch (w.kind) {
    case WaitKind::collective:
      return me + " waits in " + std::string(w.op) + " #" + std::to_string(w.seq) + on + site +
             " for " + peer + " to arrive";
    case WaitKind::recv:
      return me + " waits in recv from " + peer + on + site;
    case WaitKind::send:
      return me + " waits in send to " + peer + on + site + " for " + peer + " to receive";
    default:
      return me + " waits";
  }
}

void Checker::unregister(const WaitSite& site) {
  std::lock_guard<std::mutex> lock(mu_);
  Node& n = nodes_[static_cast<std::size_t>(site.agent->id)];
  n.waiting = false;
  n.verdict.clear();  // a verdict it never saw: the wait ended with another error first
}

void Checker::poll(const WaitSite& site, bool& registered, bool aborted) {
  std::lock_guard<std::mutex> lock(mu_);
  int id = site.agent->id;
  Node& n = nodes_[static_cast<std::size_t>(id)];
  if (!registered) {
    n.site = site;
    n.waiting = true;
    registered = true;
  }
  if (!n.verdict.empty()) {
    std::string verdict = std::move(n.verdict);
    n.verdict.clear();
    throw DeadlockError(verdict);
  }
  if (aborted || site.agent->comm == nullptr)
    return;                   // a rank's thread on a Work: its stream polls
  if (finished_count_ > 0) {  // O(members) per poll only once some rank returned
    std::vector<Edge> edges;
    edges_of(id, edges);
    for (const Edge& e : edges) {
      if (e.to < static_cast<int>(users_.size()) && finished_[static_cast<std::size_t>(e.to)]) {
        throw AbortedError(describe_step(id, e) + ", but rank " + std::to_string(e.peer_global) +
                           "'s function already returned without calling it" +
                           (explain_returned_ ? explain_returned_(e.peer_global) : std::string()));
      }
    }
  }
  constexpr auto kSearchPeriod = std::chrono::milliseconds(10);
  constexpr auto kConfirm = std::chrono::milliseconds(15);
  auto now = std::chrono::steady_clock::now();
  if (now - last_search_ < kSearchPeriod) return;
  last_search_ = now;
  auto cycle = find_any_cycle();
  std::vector<int> ids;
  for (const auto& step : cycle) ids.push_back(step.first);
  if (ids.empty() || ids != last_cycle_) {
    last_cycle_ = std::move(ids);
    last_cycle_at_ = now;
    return;
  }
  if (now - last_cycle_at_ < kConfirm) return;  // confirm across a poll period
  last_cycle_.clear();
  std::string message = describe_cycle(cycle);
  for (const auto& step : cycle) {
    if (agents_[static_cast<std::size_t>(step.first)].comm != nullptr)
      nodes_[static_cast<std::size_t>(step.first)].verdict = message;
  }
  if (!n.verdict.empty()) {
    n.verdict.clear();
    throw DeadlockError(message);
  }
}

std::string Checker::ranks_stand_locked(const std::vector<std::string>& latest) {
  std::lock_guard<std::mutex> lock(mu_);
  constexpr std::size_t kMaxRanksListed = 64;
  std::string out = "where every rank stands:";
  std::vector<Edge> edges;
  for (std::size_t r = 0; r < users_.size() && r < kMaxRanksListed; ++r) {
    out += (r ? "; rank " : " rank ") + std::to_string(r) + ": ";
    if (finished_[r]) {
      out += "its function returned";
      continue;
    }
    std::string waits;
    for (int s : streams_of_rank_[r]) {
      if (!nodes_[static_cast<std::size_t>(s)].waiting) continue;
      edges_of(s, edges);
      const WaitSite& w = nodes_[static_cast<std::size_t>(s)].site;
      constexpr std::size_t kMaxPeersListed = 16;  // a 4096-rank meeting: 4095 missing peers
      std::string peers;
      for (std::size_t i = 0; i < edges.size() && i < kMaxPeersListed; ++i)
        peers += (peers.empty() ? "" : ", ") + std::to_string(edges[i].peer_global);
      if (edges.size() > kMaxPeersListed)
        peers += " and " + std::to_string(edges.size() - kMaxPeersListed) + " more";
      waits += (waits.empty() ? "" : " and ") + std::string("in ") + std::string(w.op) +
               (w.kind == WaitKind::collective ? " #" + std::to_string(w.seq) : std::string()) +
               " on comm '" + agents_[static_cast<std::size_t>(s)].comm->name + "' (" +
               describe_call_site(w.where) + ")" +
               (peers.empty() ? std::string() : " waiting for rank(s) " + peers);
    }
    out += waits.empty() ? "running its own code" : waits;
    if (!latest[r].empty()) out += " [last operation: " + latest[r] + "]";
  }
  if (users_.size() > kMaxRanksListed)
    out += "; ... (" + std::to_string(users_.size() - kMaxRanksListed) + " more)";
  return out;
}

}  // namespace twinccl::emu
