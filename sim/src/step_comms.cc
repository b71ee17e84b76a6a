// The comms in flight of flow playback and trace replay (step_comms.h says how).
#include "step_comms.h"

#include <cmath>
#include <simgrid/s4u.hpp>

namespace sg4 = simgrid::s4u;

namespace twinccl::sim::detail {

void StepComms::start(int t) {
  const FlowTransfer& tr = p_.transfers[static_cast<std::size_t>(t)];
  const FlowRoute& route = p_.routes[static_cast<std::size_t>(tr.route)];
  active_.push_back(sg4::Comm::sendto_async(hosts_[static_cast<std::size_t>(route.src)],
                                            hosts_[static_cast<std::size_t>(route.dst)],
                                            static_cast<std::uint64_t>(std::llround(tr.bytes))));
  active_ids_.push_back(t);
}

bool StepComms::wait(double timeout_s) {
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

int StepComms::wait_one(double timeout_s) {
  const ssize_t i = sg4::Comm::wait_any_for(active_, timeout_s);
  if (i < 0) return -1;
  const int t = active_ids_[static_cast<std::size_t>(i)];
  remove(static_cast<std::size_t>(i));
  return t;
}

void StepComms::remove(std::size_t i) {
  active_[i] = active_.back();
  active_.pop_back();
  active_ids_[i] = active_ids_.back();
  active_ids_.pop_back();
}

}  // namespace twinccl::sim::detail
