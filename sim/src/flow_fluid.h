// Internal: round-based flow programs played without SimGrid, by classes of equal flows.
//
//   if (auto times = play_rounds_fluid(program)) ...   // else: too many classes, play in SimGrid
//
// flow_classes.cc groups a round's flows into classes that SimGrid's max-min sharing treats alike;
// flow_fluid.cc plays the classes with SimGrid CM02's own rules (sharing in inverse proportion to
// route latency, the latency paid before the data moves, its solver's saturation order).
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "flow_program.h"
#include "transfer_pricing.h"

namespace twinccl::sim::detail {

struct FluidResource {
  double bandwidth_bytes_per_s = 0.0;
  bool fatpipe = false;  // bounds each flow alone (SimGrid FATPIPE), shares nothing
};

struct FluidFlow {
  double bytes = 0.0, delay_s = 0.0, latency_s = 0.0;
  double multiplicity = 1.0;  // equal transfers on one route merged into this flow
  int first = 0, last = 0;    // its resources: RoundFlows::flow_resources[first, last)
};

// One round's transfers as flows on resources (link directions).
struct RoundFlows {
  std::vector<FluidFlow> flows;
  std::vector<FluidResource> resources;
  std::vector<int> flow_resources;
  std::vector<int> flow_of_transfer;  // by position in the round's transfer list
};
RoundFlows round_flows(const FlowProgram& program, const std::vector<int>& transfers);

struct ClassFlow {
  FluidFlow flow;                              // a representative (first/last unused)
  double bound_bytes_per_s = -1.0;             // its route's slowest link (SimGrid's user bound)
  std::vector<std::pair<int, int>> resources;  // (resource class, how many on the route)
};
struct ClassResource {
  FluidResource resource;
  std::vector<std::pair<int, int>> flows;  // (flow class, how many flows of it cross one)
};
struct FlowClasses {
  bool valid = false;            // false: more than max_classes flow classes
  std::vector<int> flow_class;   // per flow of the round
  std::vector<ClassFlow> flows;  // per class
  std::vector<ClassResource> resources;
};
FlowClasses flow_classes(const RoundFlows& round, std::size_t max_classes);

// Start and end (seconds from the round's start) of each flow class under CM02 max-min sharing.
FlowTimes play_classes(const FlowClasses& classes);

// Every round of a compressed program, by classes; nullopt when a round has more than
// max_classes classes (asymmetric: play it in SimGrid). Times as play_in_child's; `classes`, if
// given, gets the flow classes played, summed over the rounds.
inline constexpr std::size_t kMaxFluidClasses = 2000;
std::optional<FlowTimes> play_rounds_fluid(const FlowProgram& program,
                                           std::size_t max_classes = kMaxFluidClasses,
                                           std::size_t* classes = nullptr);

// A direct all_to_all (equal blocks, one step) on C > 1 channels whose channels are rotations of
// the ranks: every GPU pair carries one piece of each channel, the same pieces for every pair.
bool foldable_direct(const Resolved& r, const PricedCall& priced);
// Its flows built on one channel, each pair's transfer split into at most two transfers (the
// pieces of floor and ceil size) with `copies`: the flows flow_classes would merge, n(n-1)
// transfers instead of n(n-1)C (72 channels on a GB200 rack).
CallFlows add_folded_direct_flows(const Tuner& tuner, const Resolved& r, const PricedCall& priced,
                                  RouteTable& routes, FlowProgram& program);
// A direct program exchanging between every pair of ranks (all_to_all, all_gather,
// reduce_scatter) builds n(n-1) transfers (folded) or n(n-1) x channels: past this many it is an
// InvalidArgument naming the size and the most ranks that fit, at once (8192 ranks: 67M pairs,
// minutes and tens of GB to build). 1024 ranks folded (1M pairs) take about 30 s on a loaded
// 2-core machine, mostly the topology's routing of every pair.
inline constexpr double kMaxDirectTransfers = 2.0 * 1024 * 1024;
void check_direct_size(const Resolved& r, const PricedCall& priced, bool folded);
// The program with every transfer of copies k as k transfers (for SimGrid); origin[i]: the
// transfer of `program` that expanded transfer i comes from.
struct Expanded {
  FlowProgram program;
  std::vector<int> origin;
};
Expanded expand_copies(const FlowProgram& program);

}  // namespace twinccl::sim::detail
