// The forum question's pattern (CLIP's gather-with-gradient): features are all_gathered in the
// forward pass, and the backward pass must reduce_scatter the gradient of the gathered tensor
// (sum over ranks), not keep the local slice or all_reduce it. Checked numerically against a
// finite-difference gradient of the global loss, on 2 and 8 ranks.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "support/harness.h"

using namespace twinccl;
using namespace twinccl::testing;

namespace {

constexpr std::size_t kBatch = 3, kDim = 4, kLocal = kBatch * kDim;

double feature(int rank, std::size_t i) {
  return std::sin(0.3 * rank + 0.17 * static_cast<double>(i)) + 0.1;
}
double weight(int rank, std::size_t j) {
  return 0.5 + 0.25 * std::cos(1.1 * rank + 0.07 * static_cast<double>(j));
}

// Rank r's loss on the gathered features X: sum_j w_r[j] * X[j]^2 / 2 (a stand-in for CLIP's
// contrastive loss: every rank's loss depends on every rank's features).
double global_loss(const std::vector<double>& all_features, int n) {
  double total = 0;
  for (int r = 0; r < n; ++r) {
    for (std::size_t j = 0; j < all_features.size(); ++j)
      total += weight(r, j) * all_features[j] * all_features[j] / 2;
  }
  return total;
}

}  // namespace

TEST_CASE("CLIP gather-with-gradient: the backward reduce_scatter equals the true gradient",
          "[emu][clip]") {
  int n = GENERATE(2, 8);
  std::vector<std::vector<double>> grads(static_cast<std::size_t>(n));
  run_ranks(n, [&](Communicator& c) {
    Buffer local = c.alloc(kLocal, DataType::float64);
    auto f = local.host_span<double>();
    for (std::size_t i = 0; i < kLocal; ++i) f[i] = feature(c.rank(), i);
    // forward: gather every rank's features
    Buffer all = c.alloc(kLocal * static_cast<std::size_t>(n), DataType::float64);
    c.all_gather(local, all);
    // backward of this rank's loss w.r.t. the gathered tensor: w_r * X
    Buffer grad_all = c.alloc(all.count(), DataType::float64);
    auto x = all.host_span<double>();
    auto g = grad_all.host_span<double>();
    for (std::size_t j = 0; j < g.size(); ++j) g[j] = weight(c.rank(), j) * x[j];
    // the gradient of the local features: sum over ranks of their slice for this rank
    Buffer grad_local = c.alloc(kLocal, DataType::float64);
    c.reduce_scatter(grad_all, grad_local, ReduceOp::sum());
    grads[static_cast<std::size_t>(c.rank())] = grad_local.to_host<double>();
  });
  // Finite differences of the global loss, sequentially.
  std::vector<double> features;
  for (int r = 0; r < n; ++r) {
    for (std::size_t i = 0; i < kLocal; ++i) features.push_back(feature(r, i));
  }
  const double h = 1e-6;
  for (int r = 0; r < n; ++r) {
    for (std::size_t i = 0; i < kLocal; ++i) {
      std::size_t j = static_cast<std::size_t>(r) * kLocal + i;
      auto plus = features, minus = features;
      plus[j] += h;
      minus[j] -= h;
      double numeric = (global_loss(plus, n) - global_loss(minus, n)) / (2 * h);
      INFO("rank " << r << " element " << i);
      CHECK(grads[static_cast<std::size_t>(r)][i] == Approx(numeric).epsilon(1e-6));
      // the mistake the forum question is about: keeping only this rank's own loss gradient
      double own_only = weight(r, j) * features[j];
      CHECK(std::abs(own_only - numeric) > 1e-3);
    }
  }
}
