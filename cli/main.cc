// twinccl: the command-line program.
//   twinccl perf [collective...] [nccl-tests flags] [--backend emu|sim|nccl] [--topology NAME] ...
//   twinccl topo list | show NAME | check FILE
//   twinccl algo [collective]
//   twinccl replay TRACE --topology A [--topology B ...] [--trace out.json] [--links]
//   twinccl compare LOG... --topology T [--format table|csv|json]   (measured nccl-tests vs predicted)
// Exit codes: 0 success, 1 a failure while running, 2 a usage or configuration error.
#include <CLI/CLI.hpp>

#include <iostream>

#include "commands.h"
#include "twinccl/errors.h"

int main(int argc, char** argv) {
  using namespace twinccl::cli;
  CLI::App app{"TwinCCL: one collective API on NCCL or on an emulator with a network model"};
  app.require_subcommand(0, 1);
  PerfOptions perf;
  CLI::App* perf_cmd = add_perf_command(app, perf);
  TopoOptions topo;
  CLI::App* topo_cmd = add_topo_command(app, topo);
  AlgoOptions algo;
  CLI::App* algo_cmd = add_algo_command(app, algo);
  ReplayCommandOptions replay;
  CLI::App* replay_cmd = add_replay_command(app, replay);
  CompareOptions compare;
  CLI::App* compare_cmd = add_compare_command(app, compare);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  }
  try {
    if (*topo_cmd) return run_topo_command(topo, std::cout);
    if (*algo_cmd) return run_algo_command(algo, std::cout);
    if (*replay_cmd) return run_replay_command(replay, std::cout);
    if (*compare_cmd) return run_compare_command(compare, std::cout);
    (void)perf_cmd;
    return run_perf_command(perf, std::cout);  // `twinccl` alone runs the default perf sweep
  } catch (const twinccl::InvalidArgument& e) {
    std::cerr << "twinccl: " << e.what() << "\n";
    return 2;
  } catch (const twinccl::ConfigError& e) {
    std::cerr << "twinccl: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "twinccl: " << e.what() << "\n";
    return 1;
  }
}
