// Symmetric flows played once: a round-based program (compressed ring rounds, switch flows, bulk
// rings) is reduced to one representative per class of isomorphic, independent flow groups.
//
// How it works. Every round starts all its flows together and ends when they all ended
// (flow_simgrid.cc), so rounds are independent simulations. Inside a round, flows interact only
// through the links they share: SimGrid's max-min sharing (CM02) gives each flow a rate from the
// flows on its links, transitively, and nothing else (fatpipe links bound a flow alone and share
// nothing; hosts carry no cost in a comm). So the round splits into groups: the connected
// components of "shares a link direction" (a SPLITDUPLEX link's two directions are two resources,
// a half-duplex link one). Each group is written down as a signature with its links numbered by
// first appearance: per flow (in program order) its bytes, delay, route latency and hops (local
// link number, direction), then per local link its bandwidth, latency, sharing and duplex. Equal
// signatures = the same group up to renaming links: the same max-min system at every instant, so
// the same start and end times. Only the first group of each signature is played; every member of
// the others takes the time of the flow at its position. A ring across nodes with channels on
// rails: every node's NVSwitch flows are one group (all alike), every rail hop between nodes its
// own group of one (the fat-tree gives it links of its own): 2 groups played instead of 65,536
// flows on h100-cluster-1024. Exact up to the floating-point order of SimGrid's solver (tested:
// equal to the full round within 1e-9). Dependency playback (program.compressed false) is not
// reduced: a rank's steps join its flows' groups in time.
#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>
#include <unordered_map>

#include "flow_program.h"

namespace twinccl::sim::detail {
namespace {

struct UnionFind {
  std::vector<int> parent;
  explicit UnionFind(std::size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int find(int x) {
    while (parent[static_cast<std::size_t>(x)] != x) {
      int& p = parent[static_cast<std::size_t>(x)];
      p = parent[static_cast<std::size_t>(p)];  // path halving
      x = p;
    }
    return x;
  }
  void join(int a, int b) {
    a = find(a);
    b = find(b);
    if (a != b) parent[static_cast<std::size_t>(std::max(a, b))] = std::min(a, b);
  }
};

void put(std::string& s, double v) {
  char raw[sizeof v];
  std::memcpy(raw, &v, sizeof v);
  s.append(raw, sizeof v);
}
void put(std::string& s, int v) {
  char raw[sizeof v];
  std::memcpy(raw, &v, sizeof v);
  s.append(raw, sizeof v);
}

// The resource a hop loads in SimGrid's max-min system; -1: none shared (a fatpipe link).
long long resource_of(const FlowProgram& p, const FlowHop& hop) {
  const FlowLink& l = p.links[static_cast<std::size_t>(hop.link)];
  if (l.fatpipe) return -1;
  return 2LL * hop.link + (l.full_duplex && !hop.forward ? 1 : 0);
}

std::string signature(const FlowProgram& p, const std::vector<int>& group) {
  std::unordered_map<int, int> local;  // program link -> first-appearance number
  std::vector<int> order;
  std::string s;
  put(s, static_cast<int>(group.size()));
  for (int t : group) {
    const FlowTransfer& tr = p.transfers[static_cast<std::size_t>(t)];
    const FlowRoute& route = p.routes[static_cast<std::size_t>(tr.route)];
    put(s, tr.bytes);
    put(s, tr.delay_s);
    put(s, route.latency_s);
    put(s, route.src == route.dst ? 1 : 0);
    put(s, static_cast<int>(route.hops.size()));
    for (const FlowHop& hop : route.hops) {
      const auto [it, fresh] = local.try_emplace(hop.link, static_cast<int>(order.size()));
      if (fresh) order.push_back(hop.link);
      put(s, it->second);
      put(s, hop.forward ? 1 : 0);
    }
  }
  for (int link : order) {
    const FlowLink& l = p.links[static_cast<std::size_t>(link)];
    put(s, l.bandwidth_bytes_per_s);
    put(s, l.latency_s);
    put(s, (l.fatpipe ? 2 : 0) + (l.full_duplex ? 1 : 0));
  }
  return s;
}

// Adds `t` (a transfer of `from`) to `to` with its route, links and hosts renumbered.
class Copier {
 public:
  Copier(const FlowProgram& from, FlowProgram& to)
      : from_(from), to_(to), link_(from.links.size(), -1), route_(from.routes.size(), -1) {}
  int copy(int t) {
    FlowTransfer tr = from_.transfers[static_cast<std::size_t>(t)];
    int& route = route_[static_cast<std::size_t>(tr.route)];
    if (route < 0) {
      FlowRoute r = from_.routes[static_cast<std::size_t>(tr.route)];
      r.src = host(r.src);
      r.dst = host(r.dst);
      for (FlowHop& hop : r.hops) {
        int& link = link_[static_cast<std::size_t>(hop.link)];
        if (link < 0) {
          link = static_cast<int>(to_.links.size());
          to_.links.push_back(from_.links[static_cast<std::size_t>(hop.link)]);
        }
        hop.link = link;
      }
      route = static_cast<int>(to_.routes.size());
      to_.routes.push_back(std::move(r));
    }
    tr.route = route;
    tr.src_rank = tr.dst_rank = -1;  // rounds do not follow ranks
    to_.transfers.push_back(tr);
    return static_cast<int>(to_.transfers.size()) - 1;
  }

 private:
  int host(int h) {
    const auto [it, fresh] = host_.try_emplace(h, to_.nranks);
    if (fresh) ++to_.nranks;
    return it->second;
  }
  const FlowProgram& from_;
  FlowProgram& to_;
  std::vector<int> link_, route_;
  std::unordered_map<int, int> host_;
};

}  // namespace

SymmetricPlan reduce_symmetric(const FlowProgram& program) {
  SymmetricPlan plan;
  plan.reduced.compressed = true;
  plan.played.assign(program.transfers.size(), -1);
  Copier copier(program, plan.reduced);
  std::unordered_map<long long, int> first_user;  // resource -> a transfer of the round using it
  for (const FlowRound& round : program.rounds) {
    const std::vector<int>& ts = round.transfers;
    UnionFind groups(ts.size());
    first_user.clear();
    for (std::size_t i = 0; i < ts.size(); ++i) {
      const FlowTransfer& tr = program.transfers[static_cast<std::size_t>(ts[i])];
      for (const FlowHop& hop : program.routes[static_cast<std::size_t>(tr.route)].hops) {
        const long long res = resource_of(program, hop);
        if (res < 0) continue;
        const auto [it, fresh] = first_user.try_emplace(res, static_cast<int>(i));
        if (!fresh) groups.join(it->second, static_cast<int>(i));
      }
    }
    std::unordered_map<int, std::vector<int>> members;  // root -> transfers, in round order
    std::vector<int> roots;
    for (std::size_t i = 0; i < ts.size(); ++i) {
      const int root = groups.find(static_cast<int>(i));
      auto [it, fresh] = members.try_emplace(root);
      if (fresh) roots.push_back(root);
      it->second.push_back(ts[i]);
    }
    FlowRound played;
    std::unordered_map<std::string, int> class_of;  // signature -> index into roots
    for (std::size_t g = 0; g < roots.size(); ++g) {
      const std::vector<int>& group = members[roots[g]];
      const auto [it, fresh] = class_of.try_emplace(signature(program, group), static_cast<int>(g));
      const std::vector<int>& rep = members[roots[static_cast<std::size_t>(it->second)]];
      for (std::size_t k = 0; k < group.size(); ++k) {
        const int t = group[k];
        if (fresh) {
          plan.played[static_cast<std::size_t>(t)] = copier.copy(t);
          played.transfers.push_back(plan.played[static_cast<std::size_t>(t)]);
        } else {
          plan.played[static_cast<std::size_t>(t)] = plan.played[static_cast<std::size_t>(rep[k])];
        }
      }
    }
    plan.reduced.rounds.push_back(std::move(played));
    plan.groups += roots.size();
    plan.classes += class_of.size();
  }
  plan.reduced.round_sequence = program.round_sequence;
  return plan;
}

FlowTimes play_symmetric(const FlowProgram& program, std::size_t* played) {
  const SymmetricPlan plan = reduce_symmetric(program);
  if (played != nullptr) *played = plan.reduced.transfers.size();
  FlowTimes times;
  times.start_s.resize(program.transfers.size(), 0.0);
  times.end_s.resize(program.transfers.size(), 0.0);
  if (plan.reduced.transfers.empty()) return times;
  const FlowTimes reduced = play_in_child(plan.reduced);
  for (std::size_t t = 0; t < program.transfers.size(); ++t) {
    const int p = plan.played[t];
    if (p < 0) continue;  // in no round: never played
    times.start_s[t] = reduced.start_s[static_cast<std::size_t>(p)];
    times.end_s[t] = reduced.end_s[static_cast<std::size_t>(p)];
  }
  return times;
}

}  // namespace twinccl::sim::detail
