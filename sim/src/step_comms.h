// Internal: the SimGrid comms that flow playback (flow_simgrid.cc) and trace replay
// (replay_simgrid.cc) have in flight, one per moving transfer, started and harvested by the one
// controller actor.
//
//   StepComms comms(program, hosts);
//   comms.start(t);                                  // t moves now on its route
//   if (comms.wait(timeout_s)) for (int t : comms.ended()) ...;   // replay
//   const int t = comms.wait_one(timeout_s);        // flow: one at a time, -1 on timeout
//
// How it works. Both wait in one wait_any over the comms in flight; a harvested comm's place is
// taken by the last one. wait_one() returns the one comm wait_any found. wait() blocks in one
// wait_any over the comms in flight until one ends or the timeout passes; then every other comm
// that ended at the same instant (symmetric rings end together) is harvested by one sweep of
// test(), in a fixed order: the first, then the sweep's order over the in-flight list. The timers
// and launches follow these orders, so they must not change (same timelines).
#pragma once

#include <simgrid/s4u/Comm.hpp>
#include <vector>

#include "flow_program.h"

namespace simgrid::s4u {
class Host;
}

namespace twinccl::sim::detail {

class StepComms {
 public:
  StepComms(const FlowProgram& program, std::vector<simgrid::s4u::Host*> hosts)
      : p_(program), hosts_(std::move(hosts)) {}

  bool empty() const { return active_.empty(); }
  // Starts transfer t's comm now.
  void start(int t);
  // Waits until a comm ends (true: ended() lists every one that ended now) or timeout_s passes
  // (false); timeout_s < 0 waits without limit.
  bool wait(double timeout_s);
  const std::vector<int>& ended() const { return ended_; }
  // Waits until one comm ends and returns its transfer, or -1 once timeout_s passed.
  int wait_one(double timeout_s);

 private:
  void remove(std::size_t i);

  const FlowProgram& p_;
  std::vector<simgrid::s4u::Host*> hosts_;
  std::vector<simgrid::s4u::CommPtr> active_;
  std::vector<int> active_ids_;  // per comm in flight: its transfer
  std::vector<int> ended_;       // transfers that ended at this instant, in harvest order
};

}  // namespace twinccl::sim::detail
