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
       {"oci-a100-2", "gcp-a3mega-2", "gcp-a3high-2", "gcp-a4-2", "azure-ndv5-2", "mi300x-roce-2",
        "mi355x-roce-2", "h100-cluster-2", "dgx-h100"}) {
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
