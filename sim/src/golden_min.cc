// The grid-then-golden-section minimiser (golden_min.h).
#include "golden_min.h"

#include <algorithm>
#include <cmath>

namespace twinccl::sim::detail {

double golden_min(const std::function<double(double)>& cost, double lo, double hi) {
  constexpr int kGrid = 32;
  const double step = (hi - lo) / kGrid;
  int best = 0;
  double best_cost = cost(lo);
  for (int i = 1; i <= kGrid; ++i) {
    const double c = cost(lo + i * step);
    if (c < best_cost) best = i, best_cost = c;
  }
  const double grid_lo = lo, grid_hi = hi;
  lo = std::max(grid_lo, grid_lo + (best - 1) * step);
  hi = std::min(grid_hi, grid_lo + (best + 1) * step);
  const double phi = (std::sqrt(5.0) - 1.0) / 2.0;
  double a = hi - phi * (hi - lo), b = lo + phi * (hi - lo);
  double fa = cost(a), fb = cost(b);
  for (int i = 0; i < 40 && hi - lo > 1e-5; ++i) {
    if (fa < fb) {
      hi = b, b = a, fb = fa;
      a = hi - phi * (hi - lo), fa = cost(a);
    } else {
      lo = a, a = b, fa = fb;
      b = lo + phi * (hi - lo), fb = cost(b);
    }
  }
  // On a staircase the search may end on a step's far edge: the grid's point when it is better.
  const double x = (lo + hi) / 2.0;
  return cost(x) <= best_cost ? x : grid_lo + best * step;
}

}  // namespace twinccl::sim::detail
