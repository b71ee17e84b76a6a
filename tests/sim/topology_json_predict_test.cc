// `topo show P --format json > x.json`, then `perf --topology x.json` predicts what
// `perf --topology P` does, bit for bit: for every preset `topo list` names (several node counts
// where the name takes N), every collective at latency- and bandwidth-bound sizes, one GPU per
// process and nccl-tests -g 8, a one-rank world, and NCCL_ALGO-restricted choices.
#include <catch2/catch.hpp>
#include <string>

#include "support/preset_names.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_file.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {

// "" when equal; else what differs, for the message.
std::string difference(const Prediction& a, const Prediction& b) {
  if (a.algorithm != b.algorithm || a.protocol != b.protocol || a.channels != b.channels ||
      a.one_rank != b.one_rank || a.chosen_by != b.chosen_by) {
    return "choice " + label(a) + " vs " + label(b);
  }
  if (a.time_us != b.time_us) return "time " + std::to_string(a.time_us);
  if (a.busbw_gbps != b.busbw_gbps) return "busbw";
  return "";
}

}  // namespace

TEST_CASE("a preset saved as JSON predicts as the preset, bit for bit", "[sim][json]") {
  for (const std::string& name : twinccl_test::every_preset_name()) {
    const topo::Topology preset = topo::load_topology(name);
    const topo::Topology file = topo::topology_from_json(topo::to_json(preset), name + ".json");
    for (const OpKind kind : {OpKind::all_reduce, OpKind::all_gather, OpKind::reduce_scatter,
                              OpKind::broadcast, OpKind::all_to_all}) {
      for (const std::size_t bytes : {std::size_t{64} << 10, std::size_t{256} << 20}) {
        for (const int gpus_per_thread : {1, 8}) {
          if (gpus_per_thread > 1 && kind != OpKind::all_reduce) continue;  // a host floor alike
          Request r;
          r.spec.kind = kind;
          r.spec.count = bytes / 4;
          r.gpus_per_thread = gpus_per_thread;
          INFO(name << " " << static_cast<int>(kind) << " " << bytes << " B -g "
                    << gpus_per_thread);
          CHECK(difference(predict(preset, r), predict(file, r)) == "");
          if (kind == OpKind::all_reduce) {
            r.allowed_algorithms = {"ring", "tree"};  // NCCL_ALGO=ring,tree
            CHECK(difference(predict(preset, r), predict(file, r)) == "");
          }
        }
      }
    }
    Request one;
    one.spec.nranks = 1;
    one.spec.count = (std::size_t{512} << 20) / 4;
    one.gpus_per_thread = 1;
    INFO(name << " one rank");
    CHECK(difference(predict(preset, one), predict(file, one)) == "");
  }
}
