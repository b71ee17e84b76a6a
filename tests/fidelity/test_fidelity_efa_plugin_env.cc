// aws-ofi-nccl's NCCL exports have one owner, the network class's (topo::network_nccl_env): a
// topology of an EFA class runs with the plugin's NCCL_BUFFSIZE 8 MiB and NCCL_P2P_NET_CHUNKSIZE
// 512 KiB whether or not it writes them as facts (the presets do, a hand-written file or `--set
// ...=0` need not), a fact of its own wins (an older plugin's run writes NCCL's values as
// themselves), the NVLS chunks come from the same table, and `topo show` says where each came
// from (docs/fidelity.md, "aws-ofi-nccl's protocol choice (efaproto round)").
#include <catch2/catch.hpp>

#include "../../sim/src/network_class.h"
#include "../support/alltoall_time.h"
#include "../support/edited_topology.h"
#include "all_reduce_request.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/describe.h"
#include "twinccl/topologies/network_nccl_env.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using twinccl_test::preset_with;

namespace {

const std::vector<std::string> kUnset = {"nccl_buffsize_bytes=0", "p2p_net_chunk_bytes=0"};
const std::vector<std::string> kNcclOwn = {"nccl_buffsize_bytes=4194304",
                                           "p2p_net_chunk_bytes=131072"};

}  // namespace

TEST_CASE("an EFA topology without the buffer facts runs with aws-ofi-nccl's exports") {
  // p4de 2 nodes all_reduce 1 GiB: tree/Simple, whose network window follows NCCL_BUFFSIZE.
  const topo::Topology preset = topo::load_topology("aws-p4de-2");
  const topo::Topology unset = preset_with("aws-p4de-2", kUnset);
  const topo::Topology nccl_own = preset_with("aws-p4de-2", kNcclOwn);
  REQUIRE(unset.facts().nccl_buffsize_bytes == 0.0);
  const sim::Request r = fidelity::all_reduce_request(std::size_t(1) << 30);
  const double with_facts = sim::predict(preset, r).time_us;
  CHECK(sim::predict(unset, r).time_us == with_facts);  // the old code: NCCL's 4 MiB here
  CHECK(sim::predict(nccl_own, r).time_us != with_facts);

  // p5 2 nodes alltoall, 8 MiB to each peer: network messages of NCCL_P2P_NET_CHUNKSIZE.
  const topo::Topology p5 = topo::load_topology("aws-p5-2");
  const double p5_us = twinccl_test::alltoall_us(p5, 8u << 20);
  CHECK(twinccl_test::alltoall_us(preset_with("aws-p5-2", kUnset), 8u << 20) == p5_us);
  CHECK(twinccl_test::alltoall_us(preset_with("aws-p5-2", kNcclOwn), 8u << 20) != p5_us);
}

// Each class's exports as its vendor writes them (literals, not the table read twice), checked in
// the owner and in what the simulator's network class takes from it.
TEST_CASE("each class's exports are the vendors' values (the simulator's NVLS follows them)") {
  struct Expected {
    topo::NetworkClass network;
    double buffsize, p2p_chunk, nvls_chunk, nvls_tree_max;
  };
  const Expected expected[] = {
      // aws/aws-ofi-nccl v1.21.1 src/platform-aws.cpp:142-145 ("p5/p5e": NCCL_BUFFSIZE,
      // NCCL_P2P_NET_CHUNKSIZE, NCCL_NVLSTREE_MAX_CHUNKSIZE, NCCL_NVLS_CHUNKSIZE).
      {topo::NetworkClass::efa, 8388608.0, 524288.0, 524288.0, 524288.0},
      // The same file :167-170 ("p5en/p6-b200") and :187-190 ("p6-b300").
      {topo::NetworkClass::efa_v3, 8388608.0, 524288.0, 524288.0, 524288.0},
      // :92-93 ("p4d.24xlarge") and :106-107 ("p4de.24xlarge"): the buffers, no NVLS entries.
      {topo::NetworkClass::efa_sendrecv, 8388608.0, 524288.0, 0.0, 0.0},
      // GoogleCloudPlatform/cluster-toolkit@1047080 examples/machine-learning/a4-highgpu-8g/
      // a4high-vm.yaml:293 NCCL_NVLS_CHUNKSIZE=524288 alone (its :292 P2P chunk 131072 is NCCL's
      // own); no NVLS-tree cap, so NCCL's 64 KiB from 4 nodes holds.
      {topo::NetworkClass::roce_gib, 0.0, 0.0, 524288.0, 0.0},
      // Nothing exported: NCCL's defaults.
      {topo::NetworkClass::infiniband, 0.0, 0.0, 0.0, 0.0},
      {topo::NetworkClass::roce, 0.0, 0.0, 0.0, 0.0},
      {topo::NetworkClass::tcpxo, 0.0, 0.0, 0.0, 0.0},
      {topo::NetworkClass::tcpx, 0.0, 0.0, 0.0, 0.0},
  };
  for (const Expected& e : expected) {
    const topo::NetworkNcclEnv env = topo::network_nccl_env(e.network);
    const sim::detail::NetworkTerms terms = sim::detail::network_terms(e.network);
    INFO(static_cast<int>(e.network));
    CHECK(env.nccl_buffsize_bytes == e.buffsize);
    CHECK(env.p2p_net_chunk_bytes == e.p2p_chunk);
    CHECK(env.nvls_chunk_bytes == e.nvls_chunk);
    CHECK(env.nvls_tree_max_chunk_bytes == e.nvls_tree_max);
    CHECK(terms.nvls_chunk_bytes == e.nvls_chunk);
    CHECK(terms.nvls_tree_max_chunk_bytes == e.nvls_tree_max);
  }
  // The AWS presets write aws-ofi-nccl's buffers (v1.21.1 :92-93, :142-143, :167-168, :187-188).
  for (const char* preset : {"aws-p4d-2", "aws-p5-2", "aws-p5en-2", "aws-p6-b300-2"}) {
    const topo::Topology t = topo::load_topology(preset);
    INFO(preset);
    CHECK(t.facts().nccl_buffsize_bytes == 8388608.0);
    CHECK(t.facts().p2p_net_chunk_bytes == 524288.0);
  }
}

TEST_CASE("topo show says where each NCCL buffer of a call comes from") {
  const std::string unset = topo::describe(preset_with("aws-p5-2", kUnset));
  CHECK_THAT(unset, Catch::Contains("buffer 8388608 bytes (aws-ofi-nccl)"));
  CHECK_THAT(unset, Catch::Contains("NVLS chunk 524288 bytes (aws-ofi-nccl)"));
  const std::string own = topo::describe(preset_with("aws-p5-2", {"nccl_buffsize_bytes=4194304"}));
  CHECK_THAT(own, Catch::Contains("buffer 4194304 bytes (the topology's)"));
  CHECK_THAT(own, Catch::Contains("p2p net chunk 524288 bytes (aws-ofi-nccl)"));
  CHECK_THAT(topo::describe(topo::load_topology("dgx-h100")), !Catch::Contains("NCCL env"));
}
