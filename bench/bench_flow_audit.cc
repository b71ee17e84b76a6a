// bench_flow_audit: flow against analytic on every preset, collective, algorithm and protocol
// (issue 10 item 2: where no link is shared they agree within 5% at >= 64 MiB). A plain program
// printing one row per case and, at the end, every case off by more than the tolerance; not a
// test (the whole sweep takes minutes on a loaded 2-core machine).
//
//   ./build/bench/bench_flow_audit                       # the whole sweep
//   ./build/bench/bench_flow_audit --quick               # 64 MiB only, nodes 2 and 8
//   ./build/bench/bench_flow_audit --topology mi300x-cluster-8 --kind all_reduce --bytes 64M
//   ./build/bench/bench_flow_audit --tolerance 0.05 --off-only --links   # + flow's busiest links
//   ./build/bench/bench_flow_audit --topology dgx-h100 --kind all_gather_v --algo bruck --timeline
//
// Cases: for each topology (single-node presets, cluster presets at 2, 3, 4, 8, 16 nodes, one large
// size, tori), each collective (all_reduce, all_gather, reduce_scatter, broadcast, reduce,
// all_to_all, gather, scatter and the uneven all_gather_v, reduce_scatter_v, all_to_all_v,
// gather_v, scatter_v), each size (64 MiB, 1 GiB): every applicable (algorithm, protocol) pair
// compare_all() lists (the what-if algorithms too, timed by alpha-beta in analytic), LL skipped
// (NCCL never runs it at these sizes; --with-ll keeps it). The tuner's choice is marked '*'.
// Columns: analytic and flow time, flow / analytic - 1, the flow run's wall time. Sizes are
// nccl-tests' totals (the buffer a rank of all_gather gathers, what all_to_all sends, the root's
// gather/scatter buffer). The uneven variants use one fixed skewed pattern, rank i's share weighted
// 1 + (i mod 4) (all_to_all_v: the pair (s, d) weighted 1 + ((s + 2d) mod 4)), scaled so the total
// is the size asked. Each flow run gets 30 s (TWINCCL_SIM_TIMEOUT_S unless set): PAT's flow
// playback on 64 ranks does not finish in 300 s.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "twinccl/op_traits.h"
#include "twinccl/sim/flow_report.h"
#include "twinccl/sim/timing.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

struct Options {
  std::vector<std::string> topologies;
  std::vector<OpKind> kinds;
  std::vector<std::size_t> sizes;
  std::string algorithm;  // "" = every applicable one
  double tolerance = 0.05;
  bool off_only = false;
  bool with_ll = false;
  bool quick = false;
  bool links = false;     // under each off case, flow's busiest link directions (as perf --links)
  bool timeline = false;  // under each case, flow's transfers: src->dst, step, MB, start-end us
};

std::vector<std::string> default_topologies(bool quick) {
  std::vector<std::string> t = {"dgx-a100", "dgx-h100",  "dgx-h200",  "dgx-b200", "gb200-nvl72",
                                "mi300x-8", "pcie-4gpu", "torus-4x4", "torus-3x5"};
  const std::vector<int> nodes = quick ? std::vector<int>{2, 8} : std::vector<int>{2, 3, 4, 8, 16};
  for (const char* family : {"h100-cluster-", "h200-cluster-", "b200-cluster-", "mi300x-cluster-",
                             "gb200-nvl72-cluster-"}) {
    for (int n : nodes) t.push_back(family + std::to_string(n));
  }
  if (!quick) {
    for (const char* large : {"h100-cluster-32", "b200-cluster-32", "mi300x-cluster-32"}) {
      t.emplace_back(large);
    }
  }
  return t;
}

std::size_t parse_size(const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  const std::string unit = end ? std::string(end) : "";
  const double m = unit == "K" ? 1024.0 : unit == "M" ? kMiB : unit == "G" ? 1024.0 * kMiB : 1.0;
  return static_cast<std::size_t>(v * m);
}

const std::vector<OpKind>& every_kind() {
  static const std::vector<OpKind> kinds = [] {  // every collective but barrier
    std::vector<OpKind> k = {OpKind::all_reduce, OpKind::all_gather, OpKind::reduce_scatter};
    for (const OpTraits& t : all_op_traits()) {
      if (!t.p2p && t.kind != OpKind::barrier && std::find(k.begin(), k.end(), t.kind) == k.end())
        k.push_back(t.kind);
    }
    return k;
  }();
  return kinds;
}

OpKind parse_kind(const std::string& s) {
  for (OpKind k : every_kind()) {
    if (name(k) == s) return k;
  }
  std::fprintf(stderr, "unknown collective '%s'\n", s.c_str());
  std::exit(2);
}

// `weights` scaled to `total` elements (the last one takes the rounding).
std::vector<std::size_t> skewed(const std::vector<std::size_t>& weights, std::size_t total) {
  std::size_t sum = 0;
  for (std::size_t w : weights) sum += w;
  std::vector<std::size_t> counts(weights.size());
  std::size_t given = 0;
  for (std::size_t i = 0; i + 1 < weights.size(); ++i) {
    counts[i] = total / sum * weights[i];
    given += counts[i];
  }
  counts.back() = total - given;
  return counts;
}

sim::Request request(const topo::Topology& t, OpKind kind, std::size_t bytes) {
  sim::Request r;
  const auto n = static_cast<std::size_t>(t.gpu_count());
  const std::size_t elements = bytes / 4;  // float32
  r.spec.kind = kind;
  r.spec.nranks = static_cast<int>(n);
  const OpTraits& k = traits(kind);
  if (kind == OpKind::all_to_all_v) {
    std::vector<std::size_t> w(n * n);
    for (std::size_t s = 0; s < n; ++s) {
      for (std::size_t d = 0; d < n; ++d) w[s * n + d] = 1 + (s + 2 * d) % 4;
    }
    r.spec.matrix = skewed(w, elements * n);  // every rank sends `bytes` on average
  } else if (k.uneven) {
    std::vector<std::size_t> w(n);
    for (std::size_t i = 0; i < n; ++i) w[i] = 1 + i % 4;
    r.spec.counts = skewed(w, elements);
  } else {
    r.spec.count = k.size_counts_all_ranks ? elements / n : elements;
  }
  return r;
}

// Flow's transfers of one case in start order, as perf --trace records them.
void print_timeline(const topo::Topology& t, const sim::Request& f) {
  const sim::FlowReport rep = sim::simulate_flow(t, f, {.record_transfers = true});
  for (const sim::TransferRecord& x : rep.transfers) {
    std::printf("    step %d %d->%d %.2f MB %.1f-%.1f us\n", x.step, x.src, x.dst, x.bytes / 1e6,
                x.start_us, x.end_us);
  }
}

}  // namespace

int main(int argc, char** argv) {
  // A flow run that needs more than this is listed as off (its error says so), not waited for.
  setenv("TWINCCL_SIM_TIMEOUT_S", "30", 0);
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--topology") {
      o.topologies.push_back(value());
    } else if (a == "--kind") {
      o.kinds.push_back(parse_kind(value()));
    } else if (a == "--bytes") {
      o.sizes.push_back(parse_size(value()));
    } else if (a == "--algo") {
      o.algorithm = value();
    } else if (a == "--tolerance") {
      o.tolerance = std::stod(value());
    } else if (a == "--off-only") {
      o.off_only = true;
    } else if (a == "--with-ll") {
      o.with_ll = true;
    } else if (a == "--links") {
      o.links = true;
    } else if (a == "--timeline") {
      o.timeline = true;
    } else if (a == "--quick") {
      o.quick = true;
    } else {
      std::fprintf(stderr, "unknown option %s (see the comment atop bench_flow_audit.cc)\n",
                   a.c_str());
      return 2;
    }
  }
  if (o.topologies.empty()) o.topologies = default_topologies(o.quick);
  if (o.kinds.empty()) {
    o.kinds = every_kind();
  }
  if (o.sizes.empty()) {
    o.sizes = o.quick ? std::vector<std::size_t>{64 * kMiB}
                      : std::vector<std::size_t>{64 * kMiB, 1024 * kMiB};
  }

  std::vector<std::string> off;
  int cases = 0;
  std::printf("%-22s %-14s %6s %-18s %12s %12s %8s %7s\n", "topology", "collective", "MiB",
              "algorithm/proto", "analytic_us", "flow_us", "error", "wall_s");
  for (const std::string& name_t : o.topologies) {
    const topo::Topology t = topo::load_topology(name_t);
    for (OpKind kind : o.kinds) {
      for (std::size_t bytes : o.sizes) {
        sim::Request r = request(t, kind, bytes);
        r.algorithm = o.algorithm;
        std::vector<sim::Prediction> pairs;
        try {
          pairs = sim::compare_all(t, r);
        } catch (const std::exception& e) {
          std::printf("%-22s %-14s %6zu %s\n", name_t.c_str(), std::string(name(kind)).c_str(),
                      bytes / kMiB, e.what());
          continue;
        }
        for (const sim::Prediction& a : pairs) {
          if (a.protocol == sim::Protocol::ll && !o.with_ll) continue;
          sim::Request f = r;
          f.algorithm = a.algorithm;
          f.protocol = a.protocol;
          f.fidelity = sim::Fidelity::flow;
          const auto start = std::chrono::steady_clock::now();
          double flow_us = 0.0;
          std::string failure;
          try {
            flow_us = sim::predict(t, f).time_us;
          } catch (const std::exception& e) {
            failure = e.what();
          }
          const double wall_s =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          const double error = failure.empty() ? flow_us / a.time_us - 1.0 : NAN;
          const bool bad = !failure.empty() || std::abs(error) > o.tolerance;
          char line[1024];
          std::snprintf(
              line, sizeof line, "%-22s %-14s %6zu %-18s %12.1f %12.1f %+7.1f%% %7.2f%s",
              name_t.c_str(), std::string(name(kind)).c_str(), bytes / kMiB,
              (a.algorithm + "/" + std::string(sim::name(a.protocol)) + (a.tuner_choice ? "*" : ""))
                  .c_str(),
              a.time_us, flow_us, 100.0 * error, wall_s,
              failure.empty() ? "" : ("  " + failure.substr(0, 120)).c_str());
          ++cases;
          if (bad && o.links && failure.empty()) {
            const sim::FlowReport rep = sim::simulate_flow(t, f);
            for (const sim::LinkLoad& l : sim::busiest_links(rep, 2)) {
              char more[256];
              std::snprintf(more, sizeof more, "\n    %s %.1f MB, busy %.1f us (%.0f%%)",
                            l.name.c_str(), l.bytes / 1e6, l.busy_us, 100.0 * l.utilisation);
              std::strncat(line, more, sizeof line - std::strlen(line) - 1);
            }
          }
          if (bad) off.emplace_back(line);
          if (!o.off_only || bad) {
            std::printf("%s\n", line);
            if (o.timeline && failure.empty()) print_timeline(t, f);
            std::fflush(stdout);
          }
        }
      }
    }
  }
  std::printf("\n# %zu of %d cases off by more than %.0f%%:\n", off.size(), cases,
              100.0 * o.tolerance);
  for (const std::string& l : off) std::printf("%s\n", l.c_str());
  return 0;
}
