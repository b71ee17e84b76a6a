// Uneven collectives (all_gather_v, reduce_scatter_v, all_to_all_v, gather_v, scatter_v) in flow
// and analytic: a rank's block leaves (or arrives at) that rank's GPU, so the heaviest rank's first
// link bounds the call from below, and the two models agree within 5% where nothing is shared.
// Two bugs this holds down, found by bench/bench_flow_audit on the skewed pattern 1 + r mod 4:
// * flow rotated an uneven call's ranks over the GPUs per channel (as it does for NCCL's rings),
//   spreading rank 3's heavy block over every GPU: mi300x-8 direct all_gather_v 64 MiB 241.5 us,
//   under the 280 us rank 3's 13.4 MB need on each of its 48 GB/s xGMI links;
// * alpha-beta priced rank 0's steps alone (the lightest rank here): dgx-h100 direct all_gather_v
//   183.7 us, under the 253 us rank 3's 7 x 13.4 MB need on its one NVLink port (flow: 265.2);
// * alpha-beta priced an uneven ring's steps in lockstep, each at its heaviest block on its
//   slowest hop, and without PXN's relay latency across rails: h100-cluster-8 ring all_gather_v
//   2405.8 us against flow's 1411.8 (its NIC edges pipeline different blocks step after step), so
//   the tuner took bruck (1455.6 in flow) over the faster ring.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;
using namespace twinccl::sim;

namespace {
constexpr std::size_t kElements = std::size_t{16} << 20;  // 64 MiB of float32

// Rank r's share weighted 1 + r mod 4 (all_to_all_v: pair (s, d) weighted 1 + (s + 2d) mod 4).
Request skewed(const topo::Topology& t, OpKind kind, const std::string& algorithm) {
  Request r;
  const auto n = static_cast<std::size_t>(t.gpu_count());
  r.spec.kind = kind;
  r.spec.nranks = static_cast<int>(n);
  r.algorithm = algorithm;
  if (kind == OpKind::all_to_all_v) {
    for (std::size_t s = 0; s < n; ++s) {
      for (std::size_t d = 0; d < n; ++d)
        r.spec.matrix.push_back(kElements / n / 2 * (1 + (s + 2 * d) % 4));
    }
  } else {
    for (std::size_t i = 0; i < n; ++i)
      r.spec.counts.push_back(kElements / 10 / (n / 4) * (1 + i % 4));
  }
  return r;
}

// The least time rank `src`'s sends need: bytes to each peer summed on the first link of its
// route (every byte the rank sends crosses it), over that link's bandwidth.
double first_link_bound_us(const topo::Topology& t, int src, const std::vector<double>& bytes_to) {
  std::map<topo::LinkId, double> bytes_on;
  for (int d = 0; d < t.gpu_count(); ++d) {
    if (d == src || bytes_to[static_cast<std::size_t>(d)] == 0.0) continue;
    bytes_on[t.route(src, d).front()] += bytes_to[static_cast<std::size_t>(d)];
  }
  double us = 0.0;
  for (const auto& [link, bytes] : bytes_on)
    us = std::max(us, bytes / (t.link(link).bandwidth_gbps * 1e3));
  return us;
}

// The bound over every sender: all_gather_v sends rank r's block to every peer; all_to_all_v row r.
double send_bound_us(const topo::Topology& t, const Request& r) {
  const int n = t.gpu_count();
  double us = 0.0;
  for (int s = 0; s < n; ++s) {
    std::vector<double> to(static_cast<std::size_t>(n), 0.0);
    for (int d = 0; d < n; ++d) {
      const std::size_t count = r.spec.kind == OpKind::all_to_all_v
                                    ? r.spec.matrix[static_cast<std::size_t>(s * n + d)]
                                    : r.spec.counts[static_cast<std::size_t>(s)];
      to[static_cast<std::size_t>(d)] = 4.0 * static_cast<double>(count);
    }
    us = std::max(us, first_link_bound_us(t, s, to));
  }
  return us;
}
// Flow's time over analytic's, less 1, for the request (both fidelities' times logged).
double flow_over_analytic(const topo::Topology& t, Request r) {
  const double analytic_us = predict(t, r).time_us;
  r.fidelity = Fidelity::flow;
  const double flow_us = predict(t, r).time_us;
  UNSCOPED_INFO(r.algorithm << " " << name(r.spec.kind) << ": analytic " << analytic_us
                            << " us, flow " << flow_us);
  return flow_us / analytic_us - 1.0;
}
}  // namespace

TEST_CASE("uneven direct calls are never faster than the heaviest rank's first link allows") {
  const std::string preset = GENERATE(as<std::string>{}, "dgx-h100", "mi300x-8", "h100-cluster-2");
  const topo::Topology t = topo::load_topology(preset);
  const OpKind kind = GENERATE(OpKind::all_gather_v, OpKind::all_to_all_v);
  Request r = skewed(t, kind, "direct");
  const double bound_us = send_bound_us(t, r);
  const double analytic_us = predict(t, r).time_us;
  r.fidelity = Fidelity::flow;
  const double flow_us = predict(t, r).time_us;
  INFO(preset << " " << name(kind) << ": bound " << bound_us << " us, analytic " << analytic_us
              << ", flow " << flow_us);
  CHECK(analytic_us >= bound_us);
  CHECK(flow_us >= bound_us);
}

TEST_CASE("uneven direct calls agree between flow and analytic where no link is shared") {
  const std::string preset = GENERATE(as<std::string>{}, "dgx-h100", "mi300x-8", "h100-cluster-2");
  const topo::Topology t = topo::load_topology(preset);
  const OpKind kind =
      GENERATE(OpKind::all_gather_v, OpKind::reduce_scatter_v, OpKind::gather_v, OpKind::scatter_v);
  INFO(preset);
  CHECK(std::abs(flow_over_analytic(t, skewed(t, kind, "direct"))) < 0.05);
}

TEST_CASE("equal counts price an uneven call as its even collective") {
  const topo::Topology t = topo::load_topology(GENERATE(as<std::string>{}, "dgx-h100", "mi300x-8"));
  const auto n = static_cast<std::size_t>(t.gpu_count());
  Request even;
  even.spec.kind = OpKind::all_gather;
  even.spec.nranks = static_cast<int>(n);
  even.spec.count = kElements / n;
  even.algorithm = "direct";
  Request uneven = even;
  uneven.spec.kind = OpKind::all_gather_v;
  uneven.spec.count = 0;
  uneven.spec.counts.assign(n, kElements / n);
  for (Fidelity fidelity : {Fidelity::analytic, Fidelity::flow}) {
    even.fidelity = uneven.fidelity = fidelity;
    const double even_us = predict(t, even).time_us;
    const double uneven_us = predict(t, uneven).time_us;
    INFO(name(fidelity) << ": all_gather " << even_us << " us, all_gather_v " << uneven_us);
    CHECK(std::abs(uneven_us / even_us - 1.0) < 0.01);
  }
}

TEST_CASE("uneven rings and bruck across nodes: alpha-beta along the ranks' steps equals flow") {
  const std::string preset =
      GENERATE(as<std::string>{}, "h100-cluster-2", "h100-cluster-4", "h100-cluster-8");
  const topo::Topology t = topo::load_topology(preset);
  const OpKind kind = GENERATE(OpKind::all_gather_v, OpKind::reduce_scatter_v);
  const std::string algorithm = GENERATE(as<std::string>{}, "ring", "bruck");
  if (algorithm == "bruck" && kind == OpKind::reduce_scatter_v) return;  // bruck: all_gather only
  INFO(preset);
  CHECK(std::abs(flow_over_analytic(t, skewed(t, kind, algorithm))) < 0.01);
}

// The software hop a what-if ring pays across nodes has one owner
// (sim/src/what_if_latency.h): alpha-beta charged NCCL's table hop (14 us Simple on any network, 1
// us post) where flow charged the hop as the call takes it, so the two disagreed wherever the
// network class or the host priced it otherwise: mi300x-cluster-8's EPYC hosts post at 2 us
// (ring/Simple all_gather_v 64 MiB: analytic 2509.9 us, flow 2652.9), EFA's class hop is 23 us.
TEST_CASE("uneven rings across nodes: alpha-beta charges flow's hop on AMD hosts and on EFA") {
  const std::string preset = GENERATE(as<std::string>{}, "mi300x-cluster-8", "aws-p5-2");
  const topo::Topology t = topo::load_topology(preset);
  const OpKind kind = GENERATE(OpKind::all_gather_v, OpKind::reduce_scatter_v);
  INFO(preset);
  CHECK(std::abs(flow_over_analytic(t, skewed(t, kind, "ring"))) < 0.01);
}
