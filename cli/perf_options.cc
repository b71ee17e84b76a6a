// How the sweep's sizes are stepped: -i adds (checked against -e before adding, so it cannot wrap
// around 2^64), -f multiplies in floating point and each size is rounded down (repeats from
// rounding are dropped). The count is known or bounded before anything is stored, so a sweep of
// millions of sizes is refused at once instead of running for hours.
#include "perf_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "flag_values.h"
#include "twinccl/errors.h"

namespace twinccl::cli {
namespace {

[[noreturn]] void too_many(const std::string& how) {
  throw InvalidArgument(fmt::format(
      "{} gives more than {} sizes, the most one sweep may have; use a larger step or a "
      "narrower -b/-e range",
      how, kMaxSweepSizes));
}

}  // namespace

std::vector<std::size_t> sweep_sizes(const PerfOptions& o) {
  if (o.min_bytes > o.max_bytes) {
    throw InvalidArgument(fmt::format("-b {} is larger than -e {}", o.min_bytes, o.max_bytes));
  }
  std::vector<std::size_t> sizes;
  if (o.step_bytes > 0) {
    std::size_t count = (o.max_bytes - o.min_bytes) / o.step_bytes + 1;
    if (count > kMaxSweepSizes) {
      too_many(fmt::format("-b {} -e {} -i {} ({} sizes)", o.min_bytes, o.max_bytes, o.step_bytes,
                           count));
    }
    for (std::size_t s = o.min_bytes;; s += o.step_bytes) {
      sizes.push_back(s);
      if (o.max_bytes - s < o.step_bytes) break;
    }
    return sizes;
  }
  if (!std::isfinite(o.factor) || !(o.factor > 1.0)) {
    throw InvalidArgument(fmt::format("-f {}: the step factor must be a number > 1", o.factor));
  }
  if (o.min_bytes == 0 && o.max_bytes > 0) {
    throw InvalidArgument(
        "-b 0 with -f: multiplying 0 never reaches -e; start at -b 1 or more, or step with -i");
  }
  const double max = static_cast<double>(o.max_bytes) * (1 + 1e-12);
  if (o.min_bytes > 0) {  // steps of the multiplied sweep, counted before any is taken
    double steps =
        std::floor(std::log(max / static_cast<double>(o.min_bytes)) / std::log(o.factor)) + 1;
    if (steps > static_cast<double>(kMaxSweepSizes)) {
      too_many(fmt::format("-b {} -e {} -f {} ({:.0f} sizes)", o.min_bytes, o.max_bytes, o.factor,
                           steps));
    }
  }
  std::size_t steps_taken = 0;
  for (double s = static_cast<double>(o.min_bytes); s <= max && steps_taken <= kMaxSweepSizes;
       s *= o.factor) {
    auto size = static_cast<std::size_t>(std::min(s, static_cast<double>(o.max_bytes)));
    if (sizes.empty() || size != sizes.back()) sizes.push_back(size);
    ++steps_taken;
    if (s == 0) break;  // -b 0 -e 0
  }
  return sizes;
}

}  // namespace twinccl::cli
