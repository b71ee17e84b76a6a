// Internal: the SimGrid comms that trace replay (replay_simgrid.cc) has in flight, one per moving
// transfer, started and harvested by the one controller actor.
//
//   ReplayComms comms(program, hosts);
//   comms.start(t);                                  // t moves now on its route
//   if (comms.wait(timeout_s)) for (int t : comms.ended()) ...;
//
// How it works. wait() blocks in one wait_any over the comms in flight until one ends or the
// timeout passes; then every other comm that ended at the same instant (symmetric rings end
// together) is harvested by one sweep of test(), in a fixed order: the first, then the sweep's
// order over the in-flight list, where a harvested comm's place is taken by the last one. The
// replay's timers and launches follow that order, so it must not change (same timeline).
#pragma once

#include <simgrid/s4u/Comm.hpp>
#include <vector>

#include "replay_program.h"

namespace simgrid::s4u {
class Host;
}

namespace twinccl::sim::detail {

class ReplayComms {
 public:
  ReplayComms(const ReplayProgram& program, std::vector<simgrid::s4u::Host*> hosts)
      : p_(program), hosts_(std::move(hosts)) {}

  bool empty() const { return active_.empty(); }
  // Starts transfer t's comm now.
  void start(int t);
  // Waits until a comm ends (true: ended() lists every one that ended now) or timeout_s passes
  // (false); timeout_s < 0 waits without limit.
  bool wait(double timeout_s);
  const std::vector<int>& ended() const { return ended_; }

 private:
  void remove(std::size_t i);

  const ReplayProgram& p_;
  std::vector<simgrid::s4u::Host*> hosts_;
  std::vector<simgrid::s4u::CommPtr> active_;
  std::vector<int> active_ids_;  // per comm in flight: its transfer
  std::vector<int> ended_;       // transfers that ended at this instant, in harvest order
};

}  // namespace twinccl::sim::detail
