// Checker: a wait-for graph over the threads of one emulated world, so that a program that can
// never finish gets a DeadlockError naming the cycle at once instead of a hang.
//
//   Agent* stream = checker.add_stream(global_rank, comm);          // one per rank per
//   communicator WaitSite site{.agent = stream, .kind = WaitKind::recv, .comm = comm, .peer = 1,
//   ...}; world.wait(lock, cv, pred, what, {}, &site);   // registers the wait when it lasts, polls
//
// Nodes are agents: a rank's own thread (user agent, id = world rank) and each of its
// communicators' streams. A waiting agent has edges computed from facts that only ever move
// forward (arrival counters, p2p post/consume counters, task counters), never from flags that could
// be stale: a collective waits for every member that has not arrived, a recv for a peer that has
// not posted, a send for a peer that has not consumed, a rank's thread for its Work's stream or
// the stream it runs inline. A missing peer's node is its stream when the stream has queued work,
// else the peer's own thread. A cycle through the polling agent, seen twice at least one poll
// period apart, condemns every agent of the cycle: each throws DeadlockError with the cycle's text.
//
// Cost: waits register only once they lasted one poll (20 ms), so fast operations only bump
// atomic counters; one search of the whole graph (O(agents + edges)) runs per 10 ms, whoever
// polls, so a 4096-rank cycle is found in well under a second.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <source_location>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace twinccl::emu {

enum class WaitKind : std::uint8_t { none, collective, recv, send, work };

class Checker;
struct CommRecord;

// One node of the wait-for graph. Counters are atomics written outside the checker's lock.
struct Agent {
  int id = -1;
  int global_rank = -1;
  CommRecord* comm = nullptr;               // nullptr: the rank's own thread
  std::atomic<std::uint64_t> issued{0};     // tasks queued on this stream
  std::atomic<std::uint64_t> completed{0};  // tasks finished
  std::atomic<std::uint64_t> arrived{0};    // 1 + the last collective seq it arrived at
};

// What a waiting thread waits for.
struct WaitSite {
  Agent* agent = nullptr;  // who waits (a stream, or the rank's thread for work waits)
  WaitKind kind = WaitKind::none;
  int rank = -1;          // the waiter's rank in `agent->comm`
  std::uint64_t seq = 0;  // collective: its seq; send: the message number (1-based) to be consumed
  int peer = -1;          // recv/send: peer's rank in the communicator
  Agent* target = nullptr;  // work: the stream running it
  std::uint64_t task = 0;   // work: its task number on `target` (1-based)
  std::string_view op;      // "all_reduce", "split", "recv", ...
  std::source_location where;
  bool on_user_thread = false;  // run inline by the rank's own thread
};

class Checker {
 public:
  explicit Checker(int world_size);
  Checker(const Checker&) = delete;
  Checker& operator=(const Checker&) = delete;

  Agent* user(int global_rank) { return users_[static_cast<std::size_t>(global_rank)]; }
  // p2p_lanes: its send/recv run on per-(peer, direction) lanes (add_lane), not its streams.
  CommRecord* add_comm(std::string name, std::vector<int> global_ranks, bool p2p_lanes = false);
  Agent* add_stream(CommRecord* comm, int comm_rank);
  // A stream of `comm_rank` for its sends to (`sends`) or recvs from `peer` only
  // (CommRecord::p2p_lanes): a send/recv waiting on that rank then waits for this lane.
  Agent* add_lane(CommRecord* comm, int comm_rank, int peer, bool sends);
  void mark_finished(int global_rank);
  // Appended to "rank N's function already returned without calling it": why it returned.
  void explain_returned(std::function<std::string(int global_rank)> explain) {
    explain_returned_ = std::move(explain);
  }

  // p2p facts (user send/recv of one communicator, comm ranks).
  // Returns the message's number (1-based) on the (sender, receiver) pair.
  std::uint64_t posted(CommRecord* comm, int sender, int receiver);
  void consumed(CommRecord* comm, int sender, int receiver);
  // Number of messages `sender` posted to `receiver` so far (the next post is this + 1).
  std::uint64_t posts_so_far(CommRecord* comm, int sender, int receiver);

  // Called by a waiting thread at every poll: registers the wait (first call), throws
  // DeadlockError for a condemned agent; unless the world is `aborted` (the caller then reports
  // that), throws AbortedError when the peer it needs already returned and looks for a cycle
  // through this agent.
  void poll(const WaitSite& site, bool& registered, bool aborted = false);
  void unregister(const WaitSite& site);

  // One line per rank: what it waits for, or "running its own code", or "finished".
  // `latest(rank)` names the rank's last recorded operation (may return "").
  template <class Latest>
  std::string where_ranks_stand(Latest latest);

 private:
  struct Node {
    bool waiting = false;
    WaitSite site;
    std::string verdict;  // set when a cycle through this agent was confirmed elsewhere
  };
  struct Edge {
    int to;
    int peer_global;
    const char* verb;
  };
  // A new agent (stream or lane) of `comm_rank`, with its node; the caller holds mu_.
  Agent& add_agent_locked(CommRecord* comm, int comm_rank);
  void edges_of(int node, std::vector<Edge>& out);
  int target_for(const CommRecord& comm, int comm_rank) const;
  // Who must move for `comm_rank` to send to (`sends`) or receive from `peer`: its stream (or
  // lane) when it has queued work, else its own thread.
  int p2p_target(const CommRecord& comm, int comm_rank, int peer, bool sends) const;
  std::string who(const CommRecord* comm, int comm_rank) const;
  // A cycle among all waiting agents as (node, edge taken), starting at its smallest node id, or
  // empty. O(agents + edges): a collective's missing members are computed once per meeting.
  std::vector<std::pair<int, Edge>> find_any_cycle();
  std::string describe_cycle(const std::vector<std::pair<int, Edge>>& cycle) const;
  std::string describe_step(int node, const Edge& edge) const;
  std::string ranks_stand_locked(const std::vector<std::string>& latest);

  mutable std::mutex mu_;
  std::deque<Agent> agents_;
  std::vector<Agent*> users_;
  std::vector<std::vector<int>> streams_of_rank_;
  std::deque<std::unique_ptr<CommRecord>> comms_;
  std::vector<Node> nodes_;  // per agent id: the registered wait and the verdict
  std::vector<char> finished_;
  int finished_count_ = 0;
  // One search of the whole graph per kSearchPeriod, whoever polls (was: every waiter searched
  // from itself at every poll, O(n^2) per poll period for a ring of n ranks); a cycle is
  // condemned when two searches at least kConfirm apart found the same one.
  std::chrono::steady_clock::time_point last_search_{};
  std::vector<int> last_cycle_;
  std::chrono::steady_clock::time_point last_cycle_at_{};
  std::function<std::string(int)> explain_returned_;
};

struct CommRecord {
  std::string name;
  std::vector<int> global_ranks;
  std::vector<int>
      agents;  // stream agent id per comm rank, -1 until that rank's communicator exists
  std::map<std::pair<int, int>, std::pair<std::uint64_t, std::uint64_t>>
      p2p;                 // (from,to) -> (posted, consumed)
  bool p2p_lanes = false;  // send/recv run on per-(peer, direction) lanes, not on `agents`
  std::map<std::tuple<int, int, bool>, int> lanes;  // (rank, peer, sends) -> lane agent id
};

template <class Latest>
std::string Checker::where_ranks_stand(Latest latest) {
  std::vector<std::string> last(users_.size());
  for (std::size_t r = 0; r < users_.size(); ++r) last[r] = latest(static_cast<int>(r));
  return ranks_stand_locked(last);
}

}  // namespace twinccl::emu
