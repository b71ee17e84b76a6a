// CLIP's gather with gradient (the forum question): features are all_gathered in the forward pass;
// the backward pass must reduce_scatter the gradient of the gathered tensor (sum over ranks), not
// keep the local slice. Checks the gradient against finite differences of the global loss, then
// prints the simulated time when TWINCCL_TOPOLOGY is set.
//
//   TWINCCL_WORLD_SIZE=8 TWINCCL_TOPOLOGY=dgx-h100 ./example_clip_gather_backward [trace.json]
#include <cmath>
#include <iostream>
#include <mutex>
#include <vector>

#include "simulated_time.h"

using namespace twinccl;

namespace {

constexpr std::size_t kLocal = 4096;  // features per rank

double feature(int rank, std::size_t i) {
  return std::sin(0.3 * rank + 0.017 * static_cast<double>(i)) + 0.1;
}
double weight(int rank, std::size_t j) {
  return 0.5 + 0.25 * std::cos(1.1 * rank + 0.007 * static_cast<double>(j));
}

}  // namespace

int main(int argc, char** argv) {
  std::mutex mu;
  double worst_error = 0.0;
  const int rc = examples::run_with_simulated_time(argc, argv, [&](Communicator& c) {
    const int n = c.size();
    Buffer local = c.alloc(kLocal, DataType::float64);
    std::vector<double> f(kLocal);
    for (std::size_t i = 0; i < kLocal; ++i) f[i] = feature(c.rank(), i);
    local.fill_from_host<double>(f);
    Buffer all = c.alloc(kLocal * static_cast<std::size_t>(n), DataType::float64);
    c.all_gather(local, all);  // forward: every rank sees every rank's features
    c.compute_flops(2.0 * static_cast<double>(all.count()) * 512);  // the similarity matrix
    // Rank r's loss: sum_j w_r[j] X[j]^2 / 2, so its gradient w.r.t. the gathered X is w_r * X.
    Buffer grad_all = c.alloc(all.count(), DataType::float64);
    const auto x = all.to_host<double>();
    std::vector<double> g(x.size());
    for (std::size_t j = 0; j < g.size(); ++j) g[j] = weight(c.rank(), j) * x[j];
    grad_all.fill_from_host<double>(g);
    Buffer grad_local = c.alloc(kLocal, DataType::float64);
    c.reduce_scatter(grad_all, grad_local, ReduceOp::sum());  // backward: sum over ranks
    // Exact gradient of the global loss w.r.t. this rank's features: sum_r w_r[j] * x[j].
    double err = 0.0;
    const auto got = grad_local.to_host<double>();
    for (std::size_t i = 0; i < kLocal; ++i) {
      const std::size_t j = static_cast<std::size_t>(c.rank()) * kLocal + i;
      double expect = 0.0;
      for (int r = 0; r < n; ++r) expect += weight(r, j) * feature(c.rank(), i);
      err = std::max(err, std::abs(got[i] - expect));
    }
    std::lock_guard<std::mutex> lock(mu);
    worst_error = std::max(worst_error, err);
  });
  if (rc != 0) return rc;
  const bool ok = worst_error < 1e-9;
  std::cout << "semantic check: reduce_scatter of the gathered gradient equals the exact gradient, "
               "max error "
            << worst_error << (ok ? " (OK)\n" : " (WRONG)\n");
  return ok ? 0 : 1;
}
