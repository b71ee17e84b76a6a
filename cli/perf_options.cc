#include "perf_options.h"

#include <cctype>

#include "twinccl/errors.h"

namespace twinccl::cli {

std::size_t parse_bytes(const std::string& text) {
  std::size_t used = 0;
  unsigned long long value = 0;
  try {
    if (text.empty() || text[0] == '-') throw std::invalid_argument("negative");
    value = std::stoull(text, &used);
  } catch (const std::exception&) {
    throw InvalidArgument("'" + text + "' is not a size: expected a number with an optional K, M or G suffix");
  }
  std::string suffix = text.substr(used);
  unsigned shift = 0;
  if (suffix == "K" || suffix == "k") shift = 10;
  else if (suffix == "M" || suffix == "m") shift = 20;
  else if (suffix == "G" || suffix == "g") shift = 30;
  else if (suffix == "T" || suffix == "t") shift = 40;
  else if (!suffix.empty() && suffix != "B" && suffix != "b") {
    throw InvalidArgument("'" + text + "': unknown size suffix '" + suffix + "' (use K, M, G or T)");
  }
  if (shift && value > (~0ULL >> shift)) throw InvalidArgument("'" + text + "' is too large");
  return static_cast<std::size_t>(value << shift);
}

std::vector<std::size_t> sweep_sizes(const PerfOptions& o) {
  if (o.min_bytes > o.max_bytes) {
    throw InvalidArgument("-b " + std::to_string(o.min_bytes) + " is larger than -e " + std::to_string(o.max_bytes));
  }
  std::vector<std::size_t> sizes;
  if (o.step_bytes > 0) {
    for (std::size_t s = o.min_bytes; s <= o.max_bytes; s += o.step_bytes) sizes.push_back(s);
  } else {
    if (!(o.factor > 1.0)) throw InvalidArgument("-f must be > 1, got " + std::to_string(o.factor));
    for (double s = static_cast<double>(o.min_bytes); s <= static_cast<double>(o.max_bytes) * (1 + 1e-12); s *= o.factor) {
      sizes.push_back(static_cast<std::size_t>(s));
      if (s == 0) break;
    }
  }
  return sizes;
}

}  // namespace twinccl::cli
