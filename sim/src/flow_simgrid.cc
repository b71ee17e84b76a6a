// The SimGrid side of flow playback: a platform built from a FlowProgram, and one controller
// actor that starts transfers as host-to-host comms and follows step dependencies.
//
// How it works. One host per rank; one SimGrid link per topology link (SPLITDUPLEX for full
// duplex, SHARED for half duplex, FATPIPE for fatpipe), bandwidth in bytes/s, latency in s. The
// zone is our own (TopologyZone); NVSwitches that reduce in the switch (NVLS) are hosts too. Its
// routes are exactly the program's routes, looked up by (src, dst) host, so no n x n table is ever
// built (16k ranks route in O(routes)). Settings, set before the first zone (shared/DESIGN.md):
// CM02 (no latency/bandwidth factors), no cross traffic, TCP-gamma 0 (no window cap), raw contexts,
// small stacks, logs silenced. Steps: each rank is a unit of step_engine.h (buffered sends after
// their delay, grouped send/recv, per-connection FIFOs). Rounds: every transfer of a round starts
// with the round (after its delay); the next round starts when all ended.
#include <xbt/log.h>

#include <algorithm>
#include <cmath>
#include <queue>
#include <simgrid/kernel/routing/NetPoint.hpp>
#include <simgrid/kernel/routing/NetZoneImpl.hpp>
#include <simgrid/s4u.hpp>
#include <string>
#include <unordered_map>

#include "flow_program.h"
#include "simgrid_run.h"
#include "step_comms.h"
#include "step_engine.h"
#include "twinccl/errors.h"

namespace sg4 = simgrid::s4u;

namespace twinccl::sim::detail {
namespace {

class TopologyZone final : public simgrid::kernel::routing::NetZoneImpl {
 public:
  explicit TopologyZone(const std::string& zone_name) : NetZoneImpl(zone_name) {}
  void set_route(unsigned long src, unsigned long dst, std::vector<sg4::Link*> links,
                 double latency_s) {
    routes_[key(src, dst)] = {std::move(links), latency_s};
  }
  void get_local_route(const simgrid::kernel::routing::NetPoint* src,
                       const simgrid::kernel::routing::NetPoint* dst,
                       simgrid::kernel::routing::Route* into, double* latency) override {
    const auto it = routes_.find(key(src->id(), dst->id()));
    if (it == routes_.end()) {
      throw InternalError("flow playback: no route from " + src->get_name() + " to " +
                          dst->get_name());
    }
    for (sg4::Link* l : it->second.links) into->link_list_.push_back(l->get_impl());
    if (latency != nullptr) *latency += it->second.latency_s;
  }

 private:
  struct Entry {
    std::vector<sg4::Link*> links;
    double latency_s = 0.0;
  };
  static unsigned long long key(unsigned long a, unsigned long b) {
    return (static_cast<unsigned long long>(a) << 32) | b;
  }
  std::unordered_map<unsigned long long, Entry> routes_;
};

std::vector<sg4::Host*> build_platform(const FlowProgram& program) {
  auto* zone = new TopologyZone("twinccl");  // owned by the engine (the root zone)
  std::vector<sg4::Host*> hosts;
  hosts.reserve(static_cast<std::size_t>(program.nranks + program.switch_hosts));
  for (int r = 0; r < program.nranks; ++r) {
    hosts.push_back(zone->create_host("rank" + std::to_string(r), {1e9}));
  }
  for (int s = 0; s < program.switch_hosts; ++s) {
    hosts.push_back(zone->create_host("nvswitch" + std::to_string(s), {1e9}));
  }
  // Per program link: the s4u link of each direction (the same one when not split).
  std::vector<std::array<sg4::Link*, 2>> dirs;
  dirs.reserve(program.links.size());
  for (std::size_t i = 0; i < program.links.size(); ++i) {
    const FlowLink& fl = program.links[i];
    const std::string link_name = "l" + std::to_string(i);
    if (fl.full_duplex && !fl.fatpipe) {
      sg4::SplitDuplexLink* l =
          zone->create_split_duplex_link(link_name, {fl.bandwidth_bytes_per_s});
      l->set_latency(fl.latency_s);
      l->seal();
      dirs.push_back({l->get_link_up(), l->get_link_down()});
    } else {
      sg4::Link* l = zone->create_link(link_name, {fl.bandwidth_bytes_per_s});
      l->set_latency(fl.latency_s);
      l->set_sharing_policy(fl.fatpipe ? sg4::Link::SharingPolicy::FATPIPE
                                       : sg4::Link::SharingPolicy::SHARED);
      l->seal();
      dirs.push_back({l, l});
    }
  }
  for (const FlowRoute& route : program.routes) {
    std::vector<sg4::Link*> links;
    for (const FlowHop& hop : route.hops) {
      links.push_back(dirs[static_cast<std::size_t>(hop.link)][hop.forward ? 0 : 1]);
    }
    zone->set_route(hosts[static_cast<std::size_t>(route.src)]->get_netpoint()->id(),
                    hosts[static_cast<std::size_t>(route.dst)]->get_netpoint()->id(),
                    std::move(links), route.latency_s);
  }
  zone->seal();
  return hosts;
}

// The controller: plays either the rounds or the dependency program.
class Controller {
 public:
  Controller(const FlowProgram& program, std::vector<sg4::Host*> hosts, FlowTimes& times,
             std::string& stuck)
      : program_(program), hosts_(std::move(hosts)), times_(times), stuck_(&stuck) {}

  void operator()() {
    times_.start_s.assign(program_.transfers.size(), 0.0);
    times_.end_s.assign(program_.transfers.size(), 0.0);
    if (program_.compressed) {
      for (const FlowRound& round : program_.rounds) play_round(round);
    } else {
      play_dependencies();
    }
  }

 private:
  sg4::CommPtr start(int t) {
    const FlowTransfer& tr = program_.transfers[static_cast<std::size_t>(t)];
    const FlowRoute& route = program_.routes[static_cast<std::size_t>(tr.route)];
    times_.start_s[static_cast<std::size_t>(t)] = sg4::Engine::get_clock() - origin_;
    return sg4::Comm::sendto_async(hosts_[static_cast<std::size_t>(route.src)],
                                   hosts_[static_cast<std::size_t>(route.dst)],
                                   static_cast<std::uint64_t>(std::llround(tr.bytes)));
  }

  void play_round(const FlowRound& round) {
    origin_ = sg4::Engine::get_clock();
    std::vector<int> order = round.transfers;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return program_.transfers[static_cast<std::size_t>(a)].delay_s <
             program_.transfers[static_cast<std::size_t>(b)].delay_s;
    });
    std::vector<sg4::CommPtr> comms;
    comms.reserve(order.size());
    for (int t : order) {
      const double at = origin_ + program_.transfers[static_cast<std::size_t>(t)].delay_s;
      if (at > sg4::Engine::get_clock()) sg4::this_actor::sleep_until(at);
      comms.push_back(start(t));
    }
    sg4::Comm::wait_all(comms);
    for (std::size_t i = 0; i < comms.size(); ++i) {
      times_.end_s[static_cast<std::size_t>(order[i])] = comms[i]->get_finish_time() - origin_;
    }
  }

  // Steps as step_engine.h plays them; comms end one at a time (wait_any), timers due first.
  void play_dependencies() {
    origin_ = sg4::Engine::get_clock();
    std::vector<const StepEngine::Steps*> unit_steps;
    for (const auto& steps : program_.rank_steps) unit_steps.push_back(&steps);
    std::vector<std::pair<int, int>> ends;  // schedule ranks; -1: the route's
    for (const FlowTransfer& tr : program_.transfers) {
      const FlowRoute& route = program_.routes[static_cast<std::size_t>(tr.route)];
      ends.emplace_back(tr.src_rank >= 0 ? tr.src_rank : route.src,
                        tr.dst_rank >= 0 ? tr.dst_rank : route.dst);
    }
    StepComms comms(program_, hosts_);
    const auto launch = [&](int t) {
      times_.start_s[static_cast<std::size_t>(t)] = sg4::Engine::get_clock() - origin_;
      comms.start(t);
    };
    const auto post_after_delay = [&](int t) {
      timers_.push(
          {sg4::Engine::get_clock() + program_.transfers[static_cast<std::size_t>(t)].delay_s, t});
    };
    StepEngine steps(program_, std::move(unit_steps), ends, {post_after_delay, launch, nullptr});
    for (int r = 0; r < program_.nranks; ++r) steps.enter(r);
    while (!timers_.empty() || !comms.empty()) {
      while (!timers_.empty() && timers_.top().first <= sg4::Engine::get_clock()) {
        const int t = timers_.top().second;
        timers_.pop();
        steps.ready(t);
      }
      if (comms.empty()) {
        if (!timers_.empty()) sg4::this_actor::sleep_until(timers_.top().first);
        continue;
      }
      const double timeout =
          timers_.empty() ? -1.0 : std::max(0.0, timers_.top().first - sg4::Engine::get_clock());
      const int t = comms.wait_one(timeout);
      if (t < 0) continue;
      times_.end_s[static_cast<std::size_t>(t)] = sg4::Engine::get_clock() - origin_;
      steps.ended(t);
    }
    // Thrown once the engine stopped (an exception in an actor aborts SimGrid).
    for (int r = 0; r < program_.nranks && stuck_->empty(); ++r) {
      const auto ri = static_cast<std::size_t>(r);
      if (steps.step_of(r) < program_.rank_steps[ri].size()) {
        *stuck_ = "flow playback: rank " + std::to_string(r) + " never left its step " +
                  std::to_string(steps.step_of(r)) + " of " +
                  std::to_string(program_.rank_steps[ri].size()) +
                  " (a grouped send/recv waits for a peer that never reaches it)";
      }
    }
  }

  const FlowProgram& program_;
  std::vector<sg4::Host*> hosts_;
  FlowTimes& times_;
  std::string* stuck_;  // why a rank never finished its steps (empty: all did)
  double origin_ = 0.0;
  using Timer = std::pair<double, int>;
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_;  // (start at, transfer)
};

}  // namespace

void run_simgrid(const FlowProgram& program,
                 const std::function<void(const std::vector<sg4::Host*>&)>& create_actors) {
  std::vector<std::string> args = {"twinccl-flow",
                                   "--log=root.thres:critical",
                                   "--cfg=network/model:CM02",
                                   "--cfg=network/crosstraffic:0",
                                   "--cfg=network/TCP-gamma:0",
                                   "--cfg=contexts/factory:raw",
                                   "--cfg=contexts/stack-size:64",
                                   "--cfg=surf/precision:1e-12",
                                   "--cfg=maxmin/precision:1e-5"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  sg4::Engine engine(&argc, argv.data());
  xbt_log_control_set("root.thres:critical");
  const std::vector<sg4::Host*> hosts = build_platform(program);
  create_actors(hosts);
  engine.run();
}

FlowTimes play_with_simgrid(const FlowProgram& program) {
  FlowTimes times;
  std::string stuck;
  run_simgrid(program, [&](const std::vector<sg4::Host*>& hosts) {
    sg4::Actor::create("controller", hosts.front(), Controller(program, hosts, times, stuck));
  });
  if (!stuck.empty()) throw InternalError(stuck);
  return times;
}

}  // namespace twinccl::sim::detail
