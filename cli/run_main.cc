// twinccl: the command-line program (main.cc calls run_main; fuzz/fuzz_cli_args.cc too).
//   twinccl perf [collective...] [nccl-tests flags] [--backend emu|sim|nccl] [--topology NAME] ...
//   twinccl topo list | show NAME [--format json -o FILE] | check FILE
//   twinccl algo [collective]
//   twinccl replay TRACE --topology A [--topology B ...] [--trace out.json] [--links]
//   twinccl compare LOG... --topology T [--format table|csv|json]   (measured nccl-tests vs
//   predicted)
//   twinccl whatif [collective] -t A -t 'B --set K=V' [--replay TRACE] [--plot out.svg]
//   twinccl import-torch-trace RANK0.json[.gz] ... -o job.trace.json   (PyTorch profiler traces)
//   twinccl calibrate LOG... --topology T -o mycluster.json   (fit NVLink/NIC rates to your logs)
// Every command that takes a topology takes --set K=V, --degrade PART=RATE, --fail PART.
// Exit codes: 0 success, 1 a failure while running, 2 a usage or configuration error. Every error
// is one line on stderr ("twinccl: -n '0x10': expected a whole number in [1, 1000000] ...").
#include <CLI/CLI.hpp>
#include <functional>
#include <iostream>
#include <new>
#include <utility>
#include <vector>

#include "commands.h"
#include "flag_values.h"
#include "output_file.h"
#include "twinccl/errors.h"
#include "twinccl/utf8_text.h"
#include "utf8_output.h"

namespace {

// CLI11's message on one line, bounded, with unprintable bytes escaped, and where to find help.
int usage_error(const std::string& message, const CLI::App* sub) {
  std::string line = message.substr(0, message.find('\n'));
  if (line.size() > 300) line = twinccl::cut_utf8(line, 300) + "...";
  std::string text;
  for (char c : line) {
    auto u = static_cast<unsigned char>(c);
    text += u >= 0x20 && u < 0x7f ? std::string(1, c) : twinccl::cli::shown(std::string(1, c));
  }
  std::string help = sub != nullptr ? "twinccl " + sub->get_name() + " --help" : "twinccl --help";
  std::cerr << "twinccl: " << text << " (see " << help << ")\n";
  return 2;
}

// An error's message as printed: at most 2000 bytes (a library message that quotes a long value
// in full is cut short rather than flooding the terminal), unprintable bytes but newlines escaped.
std::string error_text(const char* what) {
  const std::string message = what;
  std::string text;
  for (std::size_t i = 0; i < message.size(); ++i) {
    if (text.size() >= 2000) {
      return text + "... (" + std::to_string(message.size()) + " bytes, cut short)";
    }
    auto u = static_cast<unsigned char>(message[i]);
    text += (u >= 0x20 && u < 0x7f) || u == '\n' ? std::string(1, message[i])
                                                 : twinccl::cli::shown(std::string(1, message[i]));
  }
  return text;
}

// An option given with an empty value ("--topology ''") would otherwise mean "not given" and fall
// back to the default without a word. An option whose value may be left out (`-c`) says what
// leaving it out means with its default_str, so an empty result there is an empty value too.
void refuse_empty_values(const CLI::App& sub) {
  for (const CLI::Option* opt : sub.get_options()) {
    if (opt->count() == 0 || (opt->get_expected_min() == 0 && opt->get_default_str().empty()))
      continue;
    for (const std::string& value : opt->results()) {
      if (value.empty()) {
        std::string flag = !opt->get_snames().empty()   ? "-" + opt->get_snames().front()
                           : !opt->get_lnames().empty() ? "--" + opt->get_lnames().front()
                                                        : opt->get_name();
        throw twinccl::InvalidArgument(flag +
                                       " '': an empty value; give a value or leave the flag out");
      }
    }
  }
}

}  // namespace

int twinccl::cli::run_main(int argc, char** argv) {
  CLI::App app{"TwinCCL: one collective API on NCCL or on an emulator with a network model"};
  app.require_subcommand(0, 1);
  PerfOptions perf;
  for (int i = 0; i < argc; ++i) perf.argv.emplace_back(argv[i]);  // -J writes the command line
  TopoOptions topo;
  AlgoOptions algo;
  ReplayCommandOptions replay;
  CompareOptions compare;
  WhatifOptions whatif;
  ImportTorchOptions import_torch;
  CalibrateOptions calibrate;
  // Each subcommand once: its options and how it runs (`twinccl` alone runs perf's default sweep).
  const std::vector<std::pair<CLI::App*, std::function<int()>>> commands{
      {add_perf_command(app, perf), [&] { return run_perf_command(perf, std::cout); }},
      {add_topo_command(app, topo), [&] { return run_topo_command(topo, std::cout); }},
      {add_algo_command(app, algo), [&] { return run_algo_command(algo, std::cout); }},
      {add_replay_command(app, replay), [&] { return run_replay_command(replay, std::cout); }},
      {add_compare_command(app, compare), [&] { return run_compare_command(compare, std::cout); }},
      {add_whatif_command(app, whatif), [&] { return run_whatif_command(whatif, std::cout); }},
      {add_import_torch_command(app, import_torch),
       [&] { return run_import_torch_command(import_torch, std::cout); }},
      {add_calibrate_command(app, calibrate),
       [&] { return run_calibrate_command(calibrate, std::cout); }},
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --version and the like
    const CLI::App* sub = nullptr;
    for (const auto& [s, start] : commands) {
      if (s->parsed()) sub = s;
    }
    return usage_error(e.what(), sub);
  } catch (const std::exception& e) {
    return usage_error(e.what(), nullptr);
  }
  try {
    const std::function<int()>* chosen = &commands.front().second;
    for (const auto& [s, start] : commands) {
      if (s->parsed()) {
        refuse_empty_values(*s);
        chosen = &start;
      }
    }
    // Everything a command prints is valid UTF-8 (utf8_output.h): one rule for every table.
    Utf8Output valid_utf8_output(std::cout);
    const int code = (*chosen)();
    valid_utf8_output.finish();
    flush_standard_output(std::cout);
    return code;
  } catch (const std::bad_alloc&) {
    std::cerr << "twinccl: out of memory: the run needs more memory than this machine or its "
                 "limits (ulimit -v) "
                 "allow; try smaller sizes (-e) or fewer ranks\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "twinccl: " << error_text(e.what()) << "\n";
    const bool usage = dynamic_cast<const twinccl::InvalidArgument*>(&e) != nullptr ||
                       dynamic_cast<const twinccl::ConfigError*>(&e) != nullptr;
    return usage ? 2 : 1;
  } catch (...) {
    std::cerr << "twinccl: failed with an unknown error\n";
    return 1;
  }
}
