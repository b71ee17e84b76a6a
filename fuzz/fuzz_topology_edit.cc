// Fuzz target: what-if edits (topology_edit.h) from bytes: each line is "set TEXT", "degrade TEXT"
// or "fail TEXT", parsed as --set/--degrade/--fail parse them and applied to h100-cluster-2.
// Accepted: a re-validated topology whose GPUs all route to GPU 0, or a typed twinccl::Error with
// a bounded message. At most 16 lines, so one input cannot ask for thousands of rebuilds.
//
//   fuzz_topology_edit --seconds 8 fuzz/corpus/topology_edit
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz_support.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_edit.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace topo = twinccl::topo;
  static const topo::Topology base = topo::h100_cluster(2);
  return twinccl::fuzz::expect_typed_errors([&] {
    const std::string_view text = twinccl::fuzz::as_text(data, size);
    topo::TopologyEdits edits;
    std::size_t start = 0;
    for (int line = 0; line < 16 && start < text.size(); ++line) {
      const std::size_t end = std::min(text.find('\n', start), text.size());
      const std::string_view l = text.substr(start, end - start);
      start = end + 1;
      const std::size_t space = l.find(' ');
      const std::string_view verb = l.substr(0, space);
      const std::string_view arg = space == std::string_view::npos ? "" : l.substr(space + 1);
      if (verb == "set") {
        edits.settings.push_back(topo::parse_setting(arg));
      } else if (verb == "degrade") {
        edits.faults.push_back(topo::parse_fault(topo::FaultKind::degrade, arg));
      } else if (verb == "fail") {
        edits.faults.push_back(topo::parse_fault(topo::FaultKind::fail, arg));
      }
    }
    topo::EditedTopology r{base, {}, {}};
    try {
      r = topo::apply_edits(base, edits);
    } catch (const twinccl::InternalError& e) {  // a broken invariant, not bad input
      std::fprintf(stderr, "fuzz_topology_edit: internal error: %.500s\n", e.what());
      std::abort();
    }
    for (int g = 1; g < r.topology.gpu_count(); ++g) {
      if (r.topology.route(g, 0).empty()) {
        std::fprintf(stderr, "fuzz_topology_edit: an accepted edit left GPU %d without a route\n",
                     g);
        std::abort();
      }
    }
  });
}
