// The size regimes a log's rows are judged in, one definition for `compare`'s summary and
// `calibrate`'s fits and residuals: latency below 1 MiB (launch and per-message costs dominate),
// bandwidth from 64 MiB (the link rates dominate), middle between (docs/fidelity.md's classes).
//
//   if (sim::size_regime(row.size_bytes) == sim::SizeRegime::bandwidth) ...   // >= 64 MiB
//   out << sim::regime_name(sim::size_regime(4096));                        // "latency"
#pragma once

#include <cstddef>

namespace twinccl::sim {

inline constexpr std::size_t kLatencyRegimeBelowBytes = std::size_t{1} << 20;    // 1 MiB
inline constexpr std::size_t kBandwidthRegimeFromBytes = std::size_t{64} << 20;  // 64 MiB

enum class SizeRegime { latency, middle, bandwidth };

constexpr SizeRegime size_regime(std::size_t size_bytes) {
  if (size_bytes < kLatencyRegimeBelowBytes) return SizeRegime::latency;
  return size_bytes >= kBandwidthRegimeFromBytes ? SizeRegime::bandwidth : SizeRegime::middle;
}

constexpr const char* regime_name(SizeRegime regime) {
  switch (regime) {
    case SizeRegime::latency:
      return "latency";
    case SizeRegime::middle:
      return "middle";
    case SizeRegime::bandwidth:
      return "bandwidth";
  }
  return "invalid";
}

}  // namespace twinccl::sim
