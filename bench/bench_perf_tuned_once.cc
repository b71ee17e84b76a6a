// bench_perf_tuned_once: what `twinccl perf all_reduce reduce_scatter all_gather -b 8 -e 8G -f 2
// -c 0 --topology h100-cluster-1024` spends predicting its 93 rows (8192 ranks, analytic model),
// three ways side by side (a plain program printing a table; not a test):
//
//   ./build/bench/bench_perf_tuned_once          # every way
//   ./build/bench/bench_perf_tuned_once --rows 8 # fewer rows (the first way takes ~0.4 s each)
//
//   every pair   a Tuner per row timing every applicable pair (Tuner::applicable), what choose()
//                did before: the what-if algorithms' alpha-beta walks every rank's routes
//   per row      a Tuner (and NCCL's view of the 8192 GPUs) built for every row: sim::predict(
//                topology, request), choose() timing NCCL's own algorithms first
//   once         one Tuner for the communicator, asked per row: sim::predict(tuner, request), what
//                perf does now (the selection policy keeps it)
// The last two must give the same times; the program says so and exits 1 when they differ.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "twinccl/sim/selection.h"
#include "twinccl/sim/tuner.h"
#include "twinccl/topologies/presets.h"

using namespace twinccl;

namespace {

struct Row {
  OpKind kind;
  std::size_t count;
};

// perf's rows: sizes 8 B .. 8 GiB doubling; counts per rank for the gathered collectives, rounded
// to 16-byte blocks as nccl-tests does (sizes that round to 0 skipped).
std::vector<Row> perf_rows(int nranks, int limit) {
  std::vector<Row> rows;
  for (OpKind kind : {OpKind::all_reduce, OpKind::reduce_scatter, OpKind::all_gather}) {
    for (std::size_t bytes = 8; bytes <= (std::size_t{8} << 30); bytes *= 2) {
      std::size_t count = bytes / 4;
      if (kind != OpKind::all_reduce) count = count / static_cast<std::size_t>(nranks) / 4 * 4;
      if (count == 0) continue;
      if (limit > 0 && static_cast<int>(rows.size()) >= limit) return rows;
      rows.push_back({kind, count});
    }
  }
  return rows;
}

sim::Request request_of(const Row& row, int nranks) {
  sim::Request r;
  r.spec.kind = row.kind;
  r.spec.count = row.count;
  r.spec.nranks = nranks;
  return r;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  int limit = 0;
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--rows") == 0) limit = std::atoi(argv[i + 1]);
  }
  auto t0 = std::chrono::steady_clock::now();
  auto topology = std::make_shared<const topo::Topology>(topo::load_topology("h100-cluster-1024"));
  const double load_s = seconds_since(t0);
  const int n = topology->gpu_count();
  const std::vector<Row> rows = perf_rows(n, limit);
  std::printf("# h100-cluster-1024: %d ranks, %zu rows (analytic); topology loaded in %.3f s\n", n,
              rows.size(), load_s);

  t0 = std::chrono::steady_clock::now();
  std::size_t pairs = 0;
  for (const Row& row : rows) {
    const sim::Tuner tuner(*topology, n);
    sim::TunerCall call;
    call.spec = request_of(row, n).spec;
    pairs += tuner.applicable(call).size();
  }
  const double every_pair_s = seconds_since(t0);

  t0 = std::chrono::steady_clock::now();
  std::vector<double> per_row;
  for (const Row& row : rows)
    per_row.push_back(sim::predict(*topology, request_of(row, n)).time_us);
  const double per_row_s = seconds_since(t0);

  t0 = std::chrono::steady_clock::now();
  const sim::SelectionPolicy policy(topology);
  std::vector<double> once;
  for (const Row& row : rows)
    once.push_back(sim::predict(policy.tuner(n), request_of(row, n)).time_us);
  const double once_s = seconds_since(t0);

  std::printf("%-10s %10s %12s\n", "tuner", "total_s", "per_row_ms");
  std::printf("%-10s %10.3f %12.3f  (%zu pairs timed)\n", "every pair", every_pair_s,
              1e3 * every_pair_s / rows.size(), pairs);
  std::printf("%-10s %10.3f %12.3f\n", "per row", per_row_s, 1e3 * per_row_s / rows.size());
  std::printf("%-10s %10.3f %12.3f\n", "once", once_s, 1e3 * once_s / rows.size());
  if (per_row != once) {
    std::printf("MISMATCH: the two ways predicted different times\n");
    return 1;
  }
  std::printf("same predictions both ways\n");
  return 0;
}
