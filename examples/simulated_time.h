// Shared by the examples: run a TwinCCL program; the emulator records it and, when
// TWINCCL_TOPOLOGY is set, prints the simulated timeline summary at exit and writes a Perfetto
// timeline. A path given as the first argument saves the trace (like TWINCCL_TRACE) for
// `twinccl replay TRACE --topology A --topology B`.
//
//   return examples::run_with_simulated_time(argc, argv, [](Communicator& c) { ... });
#pragma once

#include <iostream>
#include <string>

#include "twinccl/errors.h"
#include "twinccl/run.h"

namespace examples {

template <class Step>
int run_with_simulated_time(int argc, char** argv, Step step) {
  try {
    twinccl::RunOptions options = twinccl::options_from_environment();
    if (argc > 1) options.trace_path = argv[1];
    if (options.backend == "emu" && options.topology.empty()) {
      std::cout
          << "(set TWINCCL_TOPOLOGY=dgx-h100, h100-cluster-2, ... for the simulated timeline)\n";
    }
    twinccl::run(options, [&](twinccl::Communicator& world) { step(world); });
    return 0;
  } catch (const twinccl::ConfigError& e) {
    std::cerr << "twinccl: configuration error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "twinccl: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace examples
