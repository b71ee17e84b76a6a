// Internal: a one-dimensional minimiser for calibrate.cc's fits.
//
//   const double x = detail::golden_min([](double x) { return (x - 2) * (x - 2); }, 0.0, 8.0);
#pragma once

#include <functional>

namespace twinccl::sim::detail {

// The x in [lo, hi] minimising cost(x): a grid of 33 points first, then golden-section search
// between the best point's neighbours. NCCL's speed steps make the cost a staircase with flat
// stretches (a NIC behind NVLink); golden-section alone, starting with two points on one flat
// stretch, discards the side the minimum is on.
double golden_min(const std::function<double(double)>& cost, double lo, double hi);

}  // namespace twinccl::sim::detail
