// TraceRecorder: per-rank ops, waits and compute of one world, under one mutex.
//
// How it works. Communicators are identified by (name, world ranks) and numbered as first seen.
// Collectives without a sequence number get one per (rank, communicator), which is the same on
// every rank since every rank issues a communicator's collectives in the same order; send/recv
// get one per (communicator, sender, receiver), so the k-th send pairs with the k-th recv.
// Measured compute: when enabled, the wall time from the end of a rank's previous call (issue, or
// return from a wait) to the start of the next one becomes a compute event, unless the rank
// declared compute in between. Splits: every rank of the parent tells its (color, key) before
// the split's collective, so when any rank's split returns all of them are known here.
#include "twinccl/trace/recorder.h"

#include <algorithm>

#include "twinccl/errors.h"

namespace twinccl::trace {

TraceRecorder::TraceRecorder(int world_size, TraceRecorderOptions options)
    : options_(std::move(options)), start_(Clock::now()) {
  if (world_size < 1)
    throw InvalidArgument("TraceRecorder: world_size must be >= 1, got " +
                          std::to_string(world_size));
  if (!(options_.measured_compute_scale >= 0.0)) {
    throw InvalidArgument("TraceRecorder: measured_compute_scale must be >= 0, got " +
                          std::to_string(options_.measured_compute_scale));
  }
  const auto n = static_cast<std::size_t>(world_size);
  trace_.program = options_.program;
  trace_.p2p_per_peer_streams = options_.p2p_per_peer_streams;
  trace_.ranks.resize(n);
  last_call_.assign(n, start_);
  declared_since_call_.assign(n, 0);
  next_group_.assign(n, 0);
  collective_seq_.resize(n);
  p2p_seq_.resize(n);
}

void TraceRecorder::check_rank(int rank, const char* what) const {
  if (rank < 0 || rank >= trace_.world_size()) {
    throw InvalidArgument(std::string("TraceRecorder::") + what + ": rank " + std::to_string(rank) +
                          " is outside 0.." + std::to_string(trace_.world_size() - 1));
  }
}

double TraceRecorder::since_start_s(Clock::time_point t) const {
  return std::chrono::duration<double>(t - start_).count();
}

void TraceRecorder::measured_gap(int rank, Clock::time_point until) {
  const auto r = static_cast<std::size_t>(rank);
  if (options_.measured_compute_scale > 0.0 && !declared_since_call_[r]) {
    const double gap = std::chrono::duration<double>(until - last_call_[r]).count();
    if (gap > 0.0) {
      trace_.ranks[r].events.push_back({.kind = TraceEventKind::compute,
                                        .op = -1,
                                        .seconds = gap * options_.measured_compute_scale,
                                        .flops = 0.0});
    }
  }
  declared_since_call_[r] = 0;
}

int TraceRecorder::comm_index(const TraceCommunicator& comm) {
  auto [it, fresh] =
      comms_.try_emplace({comm.name, comm.ranks}, static_cast<int>(trace_.communicators.size()));
  if (fresh) trace_.communicators.push_back(comm);
  return it->second;
}

int TraceRecorder::record_op(int rank, const TraceCommunicator& comm, TraceOp op) {
  const Clock::time_point now = Clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  check_rank(rank, "record_op");
  const auto r = static_cast<std::size_t>(rank);
  const auto me = std::find(comm.ranks.begin(), comm.ranks.end(), rank);
  if (me == comm.ranks.end()) {
    throw InvalidArgument("TraceRecorder::record_op: rank " + std::to_string(rank) +
                          " is not in comm '" + comm.name + "' whose ranks are given");
  }
  const int comm_rank = static_cast<int>(me - comm.ranks.begin());
  measured_gap(rank, now);
  op.comm = comm_index(comm);
  op.issue_s = since_start_s(now);
  if (is_p2p(op.kind)) {
    const bool send = op.kind == OpKind::send;  // kept apart: a send to itself is also a recv
    const auto key = send ? std::make_tuple(op.comm, comm_rank, op.peer, true)
                          : std::make_tuple(op.comm, op.peer, comm_rank, false);
    op.seq = p2p_seq_[r][key]++;
  } else {
    op.seq = collective_seq_[r][op.comm]++;
  }
  RankTrace& rt = trace_.ranks[r];
  const int id = static_cast<int>(rt.ops.size());
  rt.ops.push_back(std::move(op));
  rt.events.push_back({.kind = TraceEventKind::op, .op = id, .seconds = 0.0, .flops = 0.0});
  last_call_[r] = now;
  return id;
}

void TraceRecorder::record_wait(int rank, int op, std::optional<Clock::time_point> began) {
  const Clock::time_point now = Clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  check_rank(rank, "record_wait");
  const auto r = static_cast<std::size_t>(rank);
  if (op < 0 || static_cast<std::size_t>(op) >= trace_.ranks[r].ops.size()) {
    throw InvalidArgument("TraceRecorder::record_wait: rank " + std::to_string(rank) +
                          " has no op " + std::to_string(op));
  }
  measured_gap(rank, began.value_or(now));
  trace_.ranks[r].events.push_back(
      {.kind = TraceEventKind::wait, .op = op, .seconds = 0.0, .flops = 0.0});
  TraceOp& o = trace_.ranks[r].ops[static_cast<std::size_t>(op)];
  if (o.complete_s < 0.0) o.complete_s = since_start_s(now);
  last_call_[r] = now;
}

void TraceRecorder::record_complete(int rank, int op) {
  const Clock::time_point now = Clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  check_rank(rank, "record_complete");
  auto& ops = trace_.ranks[static_cast<std::size_t>(rank)].ops;
  if (op < 0 || static_cast<std::size_t>(op) >= ops.size()) {
    throw InvalidArgument("TraceRecorder::record_complete: rank " + std::to_string(rank) +
                          " has no op " + std::to_string(op));
  }
  ops[static_cast<std::size_t>(op)].complete_s = since_start_s(now);
}

void TraceRecorder::record_compute(int rank, double seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  check_rank(rank, "record_compute");
  if (!(seconds >= 0.0)) {
    throw InvalidArgument("compute(seconds) on rank " + std::to_string(rank) +
                          ": seconds must be >= 0, got " + std::to_string(seconds));
  }
  trace_.ranks[static_cast<std::size_t>(rank)].events.push_back(
      {.kind = TraceEventKind::compute, .op = -1, .seconds = seconds, .flops = 0.0});
  declared_since_call_[static_cast<std::size_t>(rank)] = 1;
}

void TraceRecorder::record_compute_flops(int rank, double flops) {
  std::lock_guard<std::mutex> lock(mu_);
  check_rank(rank, "record_compute_flops");
  if (!(flops >= 0.0)) {
    throw InvalidArgument("compute_flops(flops) on rank " + std::to_string(rank) +
                          ": flops must be >= 0, got " + std::to_string(flops));
  }
  trace_.ranks[static_cast<std::size_t>(rank)].events.push_back(
      {.kind = TraceEventKind::compute, .op = -1, .seconds = 0.0, .flops = flops});
  declared_since_call_[static_cast<std::size_t>(rank)] = 1;
}

int TraceRecorder::open_group(int rank) {
  std::lock_guard<std::mutex> lock(mu_);
  check_rank(rank, "open_group");
  return ++next_group_[static_cast<std::size_t>(rank)];
}

void TraceRecorder::record_split(const TraceCommunicator& comm, int ordinal, int comm_rank,
                                 int color, int key) {
  std::lock_guard<std::mutex> lock(mu_);
  splits_[{comm.name, comm.ranks, ordinal}][comm_rank] = {color, key};
}

std::vector<int> TraceRecorder::split_members(const TraceCommunicator& comm, int ordinal,
                                              int color) const {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = splits_.find({comm.name, comm.ranks, ordinal});
  const std::size_t told = it == splits_.end() ? 0 : it->second.size();
  if (told != comm.ranks.size()) {
    throw InvalidArgument("trace recording: split #" + std::to_string(ordinal) + " of comm '" +
                          comm.name + "': " + std::to_string(told) + " of its " +
                          std::to_string(comm.ranks.size()) +
                          " ranks are recorded; record every rank of a communicator that splits");
  }
  std::vector<std::tuple<int, int, int>> members;  // (key, comm rank, world rank)
  for (const auto& [comm_rank, color_key] : it->second) {
    if (color_key.first == color) {
      members.emplace_back(color_key.second, comm_rank,
                           comm.ranks[static_cast<std::size_t>(comm_rank)]);
    }
  }
  std::sort(members.begin(), members.end());
  std::vector<int> world;
  for (const auto& m : members) world.push_back(std::get<2>(m));
  return world;
}

Trace TraceRecorder::trace() const {
  std::lock_guard<std::mutex> lock(mu_);
  return trace_;
}

}  // namespace twinccl::trace
