// Fuzz target: `twinccl compare LOG -t h100-cluster-2` from the log's bytes on: the nccl-tests
// log (stdout table or -J JSON) parsed, every row predicted on the 16-GPU h100-cluster-2 preset
// (cli/compare_report.cc) and printed as table, CSV and JSON. The first byte picks the options
// (bit 0: in-place columns, bit 1: --proto LL, bit 2: --algo ring, bit 3: --channels 2, bit 4:
// -g 2, bit 5: --ranks 8 --nodes 1 given), the rest is the log. Accepted: a report, or a typed
// twinccl::Error with a bounded message. (Flow fidelity is left to fuzz_cli_args: one SimGrid
// child per row is not milliseconds.)
//
//   fuzz_compare_log --seconds 8 fuzz/corpus/compare_log
#include <cstdint>
#include <sstream>

#include "compare_report.h"
#include "fuzz_support.h"
#include "twinccl/sim/nccl_tests_log.h"
#include "twinccl/topologies/presets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static const twinccl::topo::Topology topology = twinccl::topo::load_topology("h100-cluster-2");
  return twinccl::fuzz::expect_typed_errors([&] {
    const uint8_t flags = data[0];
    twinccl::cli::CompareOptions options;
    options.in_place = (flags & 1) != 0;
    if ((flags & 2) != 0) options.protocol = "LL";
    if ((flags & 4) != 0) options.algorithm = "ring";
    if ((flags & 8) != 0) options.channels = 2;
    if ((flags & 16) != 0) options.gpus_per_thread = 2;
    twinccl::sim::NcclTestsParseOptions parse;
    if ((flags & 32) != 0) {
      options.ranks = parse.ranks = 8;
      options.nodes = parse.nodes = 1;
    }
    auto tables = twinccl::sim::parse_nccl_tests_file_text(
        twinccl::fuzz::as_text(data + 1, size - 1), "fuzz.log", parse);
    const twinccl::cli::CompareReport report =
        twinccl::cli::build_compare_report(std::move(tables), topology, options);
    std::ostringstream out;
    twinccl::cli::print_compare_table(out, report);
    twinccl::cli::print_compare_csv(out, report);
    twinccl::cli::print_compare_json(out, report);
  });
}
