// Fuzz target: an NCCL topology XML file (NCCL_TOPO_FILE) from bytes in memory, as load_nccl_xml
// does after reading the file (topology_from_nccl_xml: nesting cap, XML parse, import,
// TopologyBuilder::seal()), then what `twinccl topo check` and `topo show` print. Accepted: a
// Topology, or a typed twinccl::Error with a bounded message. An imported topology must be one
// the JSON format can hold: to_json, then topology_from_json, gives the same JSON again.
//
//   fuzz_nccl_xml --seconds 8 fuzz/corpus/nccl_xml
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "fuzz_support.h"
#include "twinccl/topologies/describe.h"
#include "twinccl/topologies/topology_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace topo = twinccl::topo;
  return twinccl::fuzz::expect_typed_errors([&] {
    const topo::Topology t =
        topo::topology_from_nccl_xml(twinccl::fuzz::as_text(data, size), "fuzz.xml");
    (void)topo::check_report(t);
    (void)topo::describe(t);
    (void)topo::draw_node(t, 0);
    const std::string text = topo::to_json(t);
    if (topo::to_json(topo::topology_from_json(text, "round-trip.json")) != text) {
      std::fprintf(stderr, "fuzz_nccl_xml: an imported topology changed in a JSON round trip\n");
      std::abort();
    }
  });
}
