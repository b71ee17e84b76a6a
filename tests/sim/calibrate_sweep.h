// Test support for the calibration tests: an nccl-tests all_reduce sweep "measured" on a known
// topology (the model's own prediction as the log's time), and a preset with edited rates.
//   const topo::Topology truth = calibrate_test::edited("h100-cluster-2", 300.0, 40.0);
//   const NcclTestsTable log = calibrate_test::sweep(truth, 16, "2node.log", "ring");
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>

#include "twinccl/sim/nccl_tests_log.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"
#include "twinccl/topologies/topology_edit.h"

namespace calibrate_test {

// An all_reduce table as the parser returns it (-g 1, 8 B .. 1 GiB by 4x from `from_bytes`), its
// out-of-place times predicted on `truth` with `algorithm` forced ("" = NCCL's choice).
inline twinccl::sim::NcclTestsTable sweep(const twinccl::topo::Topology& truth, int ranks,
                                          const char* source, const std::string& algorithm = "",
                                          std::size_t from_bytes = 8) {
  using namespace twinccl::sim;
  NcclTestsTable t;
  t.source = source;
  t.collective = "all_reduce";
  t.kind = twinccl::OpKind::all_reduce;
  t.ranks = ranks;
  t.gpus_per_thread = 1;
  int line = 1;
  for (std::size_t bytes = from_bytes; bytes <= (std::size_t{1} << 30); bytes *= 4) {
    NcclTestsRow row;
    row.count = std::max<std::size_t>(1, bytes / 4);
    row.size_bytes = row.count * 4;
    row.line = line++;
    Request r = request_of(t, row);
    r.algorithm = algorithm;
    row.out_of_place = NcclTestsBlock{};
    row.out_of_place->time_us = predict(truth, r).time_us;
    t.rows.push_back(row);
  }
  return t;
}

// `preset` with its NVLink and NIC rates, host launch and network hop extra set (0 = the model's).
inline twinccl::topo::Topology edited(const char* preset, double nvlink_gbps, double nic_gbps,
                                      double launch_us = 0.0, double hop_extra_us = 0.0) {
  twinccl::topo::TopologyEdits e;
  e.settings.push_back({"nvlink_gbps", nvlink_gbps});
  e.settings.push_back({"nic_gbps", nic_gbps});
  e.settings.push_back({"host_launch_us", launch_us});
  e.settings.push_back({"network_hop_extra_us", hop_extra_us});
  return twinccl::topo::apply_edits(twinccl::topo::load_topology(preset), e).topology;
}

}  // namespace calibrate_test
