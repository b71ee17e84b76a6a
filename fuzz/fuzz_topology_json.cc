// Fuzz target: a topology JSON file (docs/topologies.md) from bytes in memory, as
// load_topology_json does after reading the file (topology_from_json: nesting and size caps,
// parse, fields, templates and repeats, TopologyBuilder::seal()), then what `twinccl topo check`
// and `topo show` print (check_report, describe, draw_node: routing included). Accepted: a
// Topology, or a typed twinccl::Error with a bounded message. An accepted topology of moderate
// size must survive a round trip (to_json, then topology_from_json, same JSON again).
//
//   fuzz_topology_json --seconds 8 fuzz/corpus/topology_json
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
        topo::topology_from_json(twinccl::fuzz::as_text(data, size), "fuzz.json");
    (void)topo::check_report(t);
    (void)topo::describe(t);
    (void)topo::draw_node(t, 0);
    if (t.vertices().size() + t.links().size() <= 20000) {
      const std::string text = topo::to_json(t);
      if (topo::to_json(topo::topology_from_json(text, "round-trip.json")) != text) {
        std::fprintf(stderr, "fuzz_topology_json: an accepted topology changed in a round trip\n");
        std::abort();
      }
    }
  });
}
