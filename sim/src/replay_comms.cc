// The comms in flight of trace replay (replay_comms.h says how).
#include "replay_comms.h"

#include <cmath>
#include <simgrid/s4u.hpp>

namespace sg4 = simgrid::s4u;

namespace twinccl::sim::detail {

void ReplayComms::start(int t) {
  const FlowTransfer& tr = p_.flow.transfers[static_cast<std::size_t>(t)];
  const FlowRoute& route = p_.flow.routes[static_cast<std::size_t>(tr.route)];
  active_.push_back(sg4::Comm::sendto_async(hosts_[static_cast<std::size_t>(route.src)],
                                            hosts_[static_cast<std::size_t>(route.dst)],
                                            static_cast<std::uint64_t>(std::llround(tr.bytes))));
  active_ids_.push_back(t);
}

bool ReplayComms::wait(double timeout_s) {
  ended_.clear();
  const ssize_t first = sg4::Comm::wait_any_for(active_, timeout_s);
  if (first < 0) return false;
  ended_.push_back(active_ids_[static_cast<std::size_t>(first)]);
  remove(static_cast<std::size_t>(first));
  for (std::size_t i = 0; i < active_.size();) {
    if (active_[i]->test()) {
      ended_.push_back(active_ids_[i]);
      remove(i);
    } else {
      ++i;
    }
  }
  return true;
}

void ReplayComms::remove(std::size_t i) {
  active_[i] = active_.back();
  active_.pop_back();
  active_ids_[i] = active_ids_.back();
  active_ids_.pop_back();
}

}  // namespace twinccl::sim::detail
