// The AWS EFA presets carry the NCCL settings aws-ofi-nccl (v1.16.0 and later) exports on every
// EFA platform, NCCL_BUFFSIZE 8 MiB and NCCL_P2P_NET_CHUNKSIZE 512 KiB (topologies/presets/
// aws_efa.h); no other cloud's preset does; a run of an older plugin sets NCCL's values back with
// `--set`, and a topology file written from a preset keeps them.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_edit.h"
#include "twinccl/topologies/topology_file.h"

using namespace twinccl;
using namespace twinccl::topo;

TEST_CASE("AWS EFA presets carry aws-ofi-nccl's NCCL_BUFFSIZE and NCCL_P2P_NET_CHUNKSIZE") {
  for (const std::string prefix : {"aws-p4d-", "aws-p4de-", "aws-p5-", "aws-p5e-", "aws-p5en-",
                                   "aws-p6-b200-", "aws-p6-b300-"}) {
    for (const std::string nodes : {"1", "2", "32"}) {
      CAPTURE(prefix + nodes);
      const Topology t = load_topology(prefix + nodes);
      CHECK(t.facts().nccl_buffsize_bytes == 8388608.0);
      CHECK(t.facts().p2p_net_chunk_bytes == 524288.0);
      CHECK(t.summary().nccl_buffsize_bytes == 8388608.0);
      CHECK(t.summary().p2p_net_chunk_bytes == 524288.0);
    }
  }
}

TEST_CASE("other clouds' presets keep NCCL's defaults (oci-a100 is built from the p4de node)") {
  for (const std::string name :
       {"oci-a100-2", "oci-h100-2", "gcp-a3mega-2", "gcp-a3high-2", "gcp-a4-2", "azure-ndv5-2",
        "mi300x-roce-2", "mi355x-roce-2", "h100-cluster-2", "dgx-h100"}) {
    CAPTURE(name);
    const Topology t = load_topology(name);
    CHECK(t.facts().nccl_buffsize_bytes == 0.0);
    CHECK(t.facts().p2p_net_chunk_bytes == 0.0);
  }
}

TEST_CASE("a run of an older aws-ofi-nccl sets NCCL's defaults back, a file keeps the plugin's") {
  const Topology p4d = load_topology("aws-p4d-2");
  TopologyEdits old_plugin;
  old_plugin.settings.push_back(parse_setting("nccl_buffsize_bytes=4194304"));
  old_plugin.settings.push_back(parse_setting("p2p_net_chunk_bytes=131072"));
  const Topology set_back = apply_edits(p4d, old_plugin).topology;
  CHECK(set_back.facts().nccl_buffsize_bytes == 4194304.0);
  CHECK(set_back.facts().p2p_net_chunk_bytes == 131072.0);

  const Topology back = topology_from_json(to_json(load_topology("aws-p5-2")));
  CHECK(back.facts().nccl_buffsize_bytes == 8388608.0);
  CHECK(back.facts().p2p_net_chunk_bytes == 524288.0);
}

// A bad value's message says what 0 would run with on that network (review: it said "NCCL's
// default" where an EFA class runs with aws-ofi-nccl's export).
TEST_CASE("a bad NCCL buffer setting names what 0 (not set here) runs with on its network") {
  const auto bad = [](const std::string& preset, const std::string& setting) {
    TopologyEdits edits;
    edits.settings.push_back(parse_setting(setting));
    return apply_edits(load_topology(preset), edits);
  };
  CHECK_THROWS_WITH(bad("aws-p5-2", "nccl_buffsize_bytes=1"),
                    Catch::Contains("NCCL_BUFFSIZE) must be 0 (not set here: aws-ofi-nccl's "
                                    "8388608) or whole bytes from 4096 to 1073741824, got 1"));
  CHECK_THROWS_WITH(bad("aws-p4d-2", "p2p_net_chunk_bytes=100"),
                    Catch::Contains("(not set here: aws-ofi-nccl's 524288)"));
  CHECK_THROWS_WITH(bad("dgx-h100", "nccl_buffsize_bytes=1"),
                    Catch::Contains("(not set here: NCCL's 4194304)"));
  CHECK_THROWS_WITH(bad("dgx-h100", "p2p_net_chunk_bytes=100"),
                    Catch::Contains("(not set here: NCCL's 131072)"));

  // The same check reads a topology file (a JSON with "nccl_buffsize_bytes": 1).
  std::string json = to_json(load_topology("aws-p5-2"));
  const std::string key = "\"nccl_buffsize_bytes\":";
  const std::size_t at = json.find(key);
  REQUIRE(at != std::string::npos);
  const std::size_t value = json.find_first_of("0123456789", at + key.size());
  json.replace(value, json.find_first_not_of("0123456789.", value) - value, "1");
  CHECK_THROWS_WITH(topology_from_json(json), Catch::Contains("(not set here: aws-ofi-nccl's "
                                                              "8388608)") &&
                                                  Catch::Contains("got 1"));
}
