// How much playing a replay program costs, checked before it is built too large or played too
// long (replay_build.h: check_replay_call, check_replay_cost).
//
// How it works. The replay plays every transfer in SimGrid (no symmetric rounds, unlike flow's
// one call): each transfer's start and end re-shares the bandwidth of the transfers in flight,
// so a playback costs about (transfers) x (transfers in flight). A call's transfers in flight are
// at most the sum over its ranks of their largest step (a transfer is in its sender's step
// and its receiver's: and at most all of them); calls of one communicator run one after
// the other, calls of different communicators may overlap, so while a call runs at most the sum
// over communicators of their largest call's in-flight transfers are in flight. Measured (2-core
// shared machine, Release): a 1024-rank 4 MiB all_reduce (tree, every edge at once: 32736 transfers
// in flight: 1.07e9) 4.4-8.4 s; a 64-rank all_to_all (32256, all in flight: 1.04e9) 18-22 s; 512
// ranks (16352: 2.7e8) 1.8 s. So the cap stands at 2^30: seconds, not the hours of 8192 ranks
// (6.9e10). Memory: every transfer is held (route, bytes, members, steps: about 100 bytes); a call
// whose schedule builds one transfer per rank pair and channel (direct, pat) is refused before it
// is built.
#include <algorithm>
#include <map>
#include <string>

#include "algorithm_traits.h"
#include "replay_build.h"
#include "trace_analysis.h"
#include "twinccl/errors.h"

namespace twinccl::sim::detail {
namespace {

constexpr double kMaxTransferInFlightPairs = 1073741824.0;  // 2^30 (above)
constexpr double kMaxReplayTransfers = 4194304.0;           // 2^22, all calls together (memory)

bool every_pair_schedule(std::string_view schedule) {
  const AlgorithmTraits* t = find_traits(schedule);
  return t != nullptr && t->every_pair;
}

std::string shown_count(double x) { return std::to_string(static_cast<long long>(x)); }

}  // namespace

void check_replay_call(const Trace& trace, const TraceOp& op, int nranks, std::string_view schedule,
                       int channels, std::size_t transfers_so_far) {
  const double n = nranks;
  const bool every_pair = channels >= 0 && every_pair_schedule(schedule);
  const double transfers = every_pair ? n * (n - 1) * std::max(1, channels) : 0.0;
  if (transfers_so_far + transfers <= kMaxReplayTransfers) return;
  throw ConfigError("trace replay: " + op_label(trace, op) + " (" + std::to_string(nranks) +
                    " ranks, " + std::string(schedule) + "): the replay would hold over " +
                    shown_count(kMaxReplayTransfers) + " transfers (" +
                    shown_count(transfers_so_far + transfers) +
                    "; its memory and time grow with them); replay fewer ranks or fewer "
                    "operations, or price one such call with `twinccl perf` (flow plays "
                    "symmetric rounds once)");
}

void check_replay_cost(const Trace& trace, const std::vector<InstanceInfo>& info,
                       const ReplayProgram& p) {
  const std::size_t instances = p.instances.size();
  std::vector<double> transfers(instances, 0.0), in_flight(instances, 0.0);
  for (const auto& [sender, receiver] : p.transfer_members) {
    if (sender >= 0)
      transfers[static_cast<std::size_t>(p.members[static_cast<std::size_t>(sender)].instance)] +=
          1.0;
  }
  for (const ReplayMember& m : p.members) {
    std::size_t widest = 0;
    for (const std::vector<int>& step : m.steps) widest = std::max(widest, step.size());
    in_flight[static_cast<std::size_t>(m.instance)] += static_cast<double>(widest);
  }
  std::map<int, double> comm_in_flight;  // per communicator: its largest call's
  for (std::size_t i = 0; i < instances; ++i) {
    double& c = comm_in_flight[info[i].first->comm];
    // A transfer is in its sender's step and its receiver's: at most all of the call's in flight.
    c = std::max(c, std::min(in_flight[i], transfers[i]));
  }
  double all_in_flight = 0.0;
  for (const auto& [comm, c] : comm_in_flight) all_in_flight += c;
  for (std::size_t i = 0; i < instances; ++i) {
    const double pairs = transfers[i] * all_in_flight;
    if (pairs <= kMaxTransferInFlightPairs) continue;
    const TraceOp& op = *info[i].first;
    const std::size_t nranks = trace.communicators[static_cast<std::size_t>(op.comm)].ranks.size();
    throw ConfigError(
        "trace replay: " + op_label(trace, op) + " (" + std::to_string(nranks) + " ranks, " +
        info[i].algorithm + ") plays " + shown_count(transfers[i]) + " transfers with up to " +
        shown_count(all_in_flight) + " in flight (all communicators): " + shown_count(pairs) +
        " transfer x in-flight pairs, over the replay's cap of " +
        shown_count(kMaxTransferInFlightPairs) +
        " (minutes to hours of playback); replay fewer ranks, or price one such call with "
        "`twinccl perf` (flow plays symmetric rounds once)");
  }
}

}  // namespace twinccl::sim::detail
