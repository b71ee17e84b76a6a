// A rank's GPU timeline turned into trace events (torch_read.h).
//
// How it works. Streams that ran a kernel other than NCCL's are compute streams; their kernels,
// memcpy and memset (NCCL kernels aside) are compute, and the compute streams' busy time is the
// union of those intervals. (ProcessGroupNCCL runs NCCL kernels on streams of their own: an op
// whose kernel ran on a stream with no other kernel is async; on a compute stream it is not.) Each
// op (a call of record_param_comms) is tied to its NCCL kernel by "External id" (the profiler
// copies the call's id to the kernel it launched). The op is issued when its kernel started and
// waited when its kernel ended; compute between two such points is the time the compute streams
// were busy then:
//
//   compute stream  |==fwd==|      |====bwd====|=bwd=|          |=opt=|
//   comm stream              [ar0]      [ar1 ........]
//   events          compute, op0, wait0, compute, op1, compute, wait1, compute
//
// so compute that overlapped a collective in the real run overlaps it in the replay, and compute
// that came after it waits for it (conservative: the replay assumes it needed the result). An op
// whose kernel is not in the trace (outside the profiled window, or no kernel: one rank) is issued
// and waited at its CPU start. Ops are issued in the order the CPU issued them (a later issue
// time is moved up to its predecessor's). A rank with no GPU activity at all (a CPU-only
// profile) computes for the whole gap between the end of one call and the start of the next.
#include <algorithm>
#include <map>

#include "torch_read.h"
#include "twinccl/errors.h"

namespace twinccl::trace::detail {
namespace {

// The union of intervals, with prefix sums: busy(a, b) is the covered time in [a, b).
class BusyTime {
 public:
  explicit BusyTime(std::vector<std::pair<double, double>> spans) {
    std::sort(spans.begin(), spans.end());
    for (const auto& [s, e] : spans) {
      if (e <= s) continue;
      if (!start_.empty() && s <= end_.back()) {
        end_.back() = std::max(end_.back(), e);
      } else {
        start_.push_back(s);
        end_.push_back(e);
      }
    }
    before_.assign(start_.size() + 1, 0.0);
    for (std::size_t i = 0; i < start_.size(); ++i)
      before_[i + 1] = before_[i] + (end_[i] - start_[i]);
  }
  bool empty() const { return start_.empty(); }
  double first() const { return start_.front(); }
  double last() const { return end_.back(); }
  double busy(double a, double b) const {
    return b <= a ? 0.0 : covered_until(b) - covered_until(a);
  }

 private:
  double covered_until(double t) const {  // covered time in (-inf, t)
    const auto it = std::upper_bound(start_.begin(), start_.end(), t);
    const std::size_t k = static_cast<std::size_t>(it - start_.begin());
    if (k == 0) return 0.0;
    return before_[k - 1] + (std::min(t, end_[k - 1]) - start_[k - 1]);
  }
  std::vector<double> start_, end_, before_;
};

}  // namespace

std::vector<TraceEvent> timeline_events(const TorchRankFile& file,
                                        const std::vector<std::size_t>& call_of_op,
                                        std::vector<OpTimes>& times) {
  std::map<std::int64_t, const GpuActivity*> kernel_of;
  std::map<std::int64_t, bool> compute_stream;
  for (const GpuActivity& g : file.gpu) {
    if (g.nccl && g.external_id >= 0) kernel_of.emplace(g.external_id, &g);
    if (g.kernel && !g.nccl) compute_stream[g.stream] = true;
  }
  std::vector<std::pair<double, double>> compute;
  for (const GpuActivity& g : file.gpu) {
    if (!g.nccl && compute_stream.contains(g.stream)) compute.emplace_back(g.start_us, g.end_us);
  }
  const BusyTime busy(std::move(compute));
  const bool cpu_only = file.gpu.empty();

  times.assign(call_of_op.size(), {});
  for (std::size_t i = 0; i < call_of_op.size(); ++i) {
    const TorchCommCall& c = file.calls[call_of_op[i]];
    OpTimes& t = times[i];
    const auto k = c.external_id >= 0 ? kernel_of.find(c.external_id) : kernel_of.end();
    if (k != kernel_of.end()) {
      t = {k->second->start_us, k->second->end_us, true,
           !compute_stream.contains(k->second->stream)};
    } else {
      t = {c.ts_us, cpu_only ? c.ts_us + c.dur_us : c.ts_us, false, false};
    }
    if (i > 0) t.issue_us = std::max(t.issue_us, times[i - 1].issue_us);
    t.done_us = std::max(t.done_us, t.issue_us);
  }
  std::vector<std::size_t> by_done(times.size());
  for (std::size_t i = 0; i < by_done.size(); ++i) by_done[i] = i;
  std::stable_sort(by_done.begin(), by_done.end(), [&](std::size_t a, std::size_t b) {
    return times[a].done_us < times[b].done_us;
  });

  std::vector<TraceEvent> events;
  auto compute_until = [&](double from, double to) {
    const double us = cpu_only ? std::max(0.0, to - from) : busy.busy(from, to);
    if (us <= 0.0) return;
    const double seconds = us * 1e-6;
    if (seconds > kMaxComputeSeconds) {
      throw ConfigError(file.source + ": compute of " + std::to_string(seconds) +
                        " s between two operations is over the cap of " +
                        std::to_string(kMaxComputeSeconds) + " s; are the timestamps in us?");
    }
    events.push_back({.kind = TraceEventKind::compute, .op = -1, .seconds = seconds, .flops = 0});
  };
  double now = times.empty() ? 0.0 : times.front().issue_us;
  if (!busy.empty()) now = std::min(now, busy.first());
  if (times.empty() && !busy.empty()) now = busy.first();
  std::size_t next_issue = 0, next_wait = 0;
  while (next_issue < times.size() || next_wait < by_done.size()) {
    const bool wait_first = next_issue == times.size() ||
                            (by_done[next_wait] < next_issue &&
                             times[by_done[next_wait]].done_us <= times[next_issue].issue_us);
    if (wait_first) {
      const std::size_t op = by_done[next_wait++];
      compute_until(now, times[op].done_us);
      now = std::max(now, times[op].done_us);
      events.push_back(
          {.kind = TraceEventKind::wait, .op = static_cast<int>(op), .seconds = 0, .flops = 0});
    } else {
      const std::size_t op = next_issue++;
      compute_until(now, times[op].issue_us);
      now = std::max(now, times[op].issue_us);
      events.push_back(
          {.kind = TraceEventKind::op, .op = static_cast<int>(op), .seconds = 0, .flops = 0});
    }
  }
  if (!cpu_only && !busy.empty()) compute_until(now, std::max(now, busy.last()));
  return events;
}

}  // namespace twinccl::trace::detail
