// What a flow-level run saw: the prediction, how busy each link direction was, and (on request)
// every transfer with its start and end, for `twinccl perf --links` and `--trace FILE`.
//
//   sim::FlowReport rep = sim::simulate_flow(topo, request, {.record_transfers = true});
//   for (const sim::LinkLoad& l : sim::busiest_links(rep, 5)) std::cout << l.name << l.utilisation;
//   std::ofstream f("trace.json"); sim::write_trace_json(rep, f);   // open in ui.perfetto.dev
#pragma once

#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

#include "twinccl/sim/timing.h"

namespace twinccl::sim {

// One direction of one topology link ("n0.gpu3->n0.nvswitch"); a half-duplex link is one entry
// named "a<->b" carrying both directions.
struct LinkLoad {
  std::string name;
  topo::LinkId link = -1;
  double bytes = 0.0;        // bytes that crossed it (on the wire: LL/LL128 overhead included)
  double busy_us = 0.0;      // bytes / bandwidth: time it would need at full rate
  double utilisation = 0.0;  // busy_us / the collective's time, 0..1
};

// One transfer (one send/recv pair, one channel) as played.
struct TransferRecord {
  int src = 0, dst = 0;
  int step = 0;        // the sender's step index in its schedule
  double bytes = 0.0;  // on the wire
  double start_us = 0.0, end_us = 0.0;
};

struct FlowOptions {
  bool record_transfers = false;
  // Transfers kept at most (the earliest); a compressed 1024-rank ring has millions.
  std::size_t max_transfers = 1'000'000;
};

struct FlowReport {
  Prediction prediction;
  std::vector<LinkLoad> links;            // every used link direction, busiest first
  std::vector<TransferRecord> transfers;  // by start time, when recorded
  bool transfers_truncated = false;
  // How the playback ran (what a test holds down instead of timing it): the flows simulated
  // (SimGrid comms, or flow classes where a one-round program is played by classes), and whether
  // it followed the ranks' steps event by event (the dependency playback, whose SimGrid cost
  // grows with the flows active at once) rather than rounds.
  std::size_t simulated_flows = 0;
  bool step_playback = false;
};

// Flow fidelity for one (algorithm, protocol): request.algorithm must be set; an unset protocol
// means Simple. Throws InvalidArgument like predict().
FlowReport simulate_flow(const topo::Topology& topology, const Request& request,
                         const FlowOptions& options = {});

// The `count` busiest link directions (by busy time).
std::vector<LinkLoad> busiest_links(const FlowReport& report, std::size_t count);

// Chrome/Perfetto trace JSON: one process, one track (thread) per rank, one complete slice ("ph":
// "X") per transfer on the sender's track, named "send->DST", args {bytes, peer, step}; a second
// slice "recv<-SRC" on the receiver's track. Times in microseconds. Needs recorded transfers.
void write_trace_json(const FlowReport& report, std::ostream& out);

}  // namespace twinccl::sim
