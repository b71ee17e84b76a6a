// Shared by the examples: run a TwinCCL program with its calls recorded, then (when
// TWINCCL_TOPOLOGY is set) print the simulated timeline summary, and (when a path is given as the
// first argument) save the trace for `twinccl replay TRACE --topology A --topology B`.
//
//   return examples::run_with_simulated_time(argc, argv, "my step", [](Communicator& c) { ... });
//
// Until the emulator records by itself, recording goes through emu::TracingCommunicator, which
// wraps the world communicator handed to the step (on NCCL nothing is recorded).
#pragma once

#include <iostream>
#include <string>

#include "twinccl/emu/trace.h"
#include "twinccl/run.h"
#include "twinccl/sim/replay.h"
#include "twinccl/topologies/presets.h"

namespace examples {

template <class Step>
int run_with_simulated_time(int argc, char** argv, const std::string& program, Step step) {
  twinccl::RunOptions options;
  try {
    options = twinccl::options_from_environment();
  } catch (const twinccl::Error& e) {
    std::cerr << "twinccl: configuration error: " << e.what() << "\n";
    return 2;
  }
  const bool record = options.backend == "emu";
  twinccl::emu::TraceRecorder recorder(record ? options.world_size : 1, {.program = program});
  const int rc = twinccl::run(argc, argv, [&](twinccl::Communicator& world) {
    if (!record) return step(world);
    twinccl::emu::TracingCommunicator traced(world, recorder);
    step(traced);
  });
  if (rc != 0 || !record) return rc;
  try {
    const twinccl::sim::Trace trace = recorder.trace();
    if (argc > 1) {
      twinccl::sim::save_trace(trace, argv[1]);
      std::cout << "trace written to " << argv[1] << "\n";
    }
    if (!options.topology.empty()) {
      std::cout << twinccl::sim::summarize_replay(trace, twinccl::topo::load_topology(options.topology));
    } else {
      std::cout << "(set TWINCCL_TOPOLOGY=dgx-h100, h100-cluster-2, ... for the simulated timeline)\n";
    }
  } catch (const twinccl::Error& e) {
    std::cerr << "twinccl: simulated time: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace examples
