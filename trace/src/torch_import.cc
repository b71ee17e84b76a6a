// PyTorch profiler traces of one job -> one twinccl-trace (torch_import.h, docs/traces.md).
//
// How it works. Each file is read (torch_read.cc: the calls and the GPU timeline); the files must
// name every rank of one world once. Each call becomes an op (torch_ops.cc) on the communicator of
// its process group: the members are "Process Group Ranks", or the world when that list is absent
// or cut short and the group is the whole world, or "Global rank start/stride". Collectives are
// numbered per rank and communicator, send/recv per (sender, receiver); the GPU timeline gives
// the events (torch_timeline.cc). With replicate_missing_ranks, a rank without a file is a copy of
// the lowest given rank's ops and events, each op moved to its group's counterpart for that rank
// (torch_replicate.cc). Then the files are checked to be one job (torch_agree.cc).
#include "twinccl/trace/torch_import.h"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <tuple>

#include "torch_importer.h"
#include "twinccl/errors.h"

namespace twinccl::trace {
namespace detail {

[[noreturn]] static void fail(const std::string& what) { throw ConfigError(what); }

void Importer::add(const TorchRankFile& f) {
  if (world_ < 0) {
    world_ = f.world_size;
    out_.trace.ranks.resize(static_cast<std::size_t>(world_));
    files_.resize(static_cast<std::size_t>(world_));
  } else if (f.world_size != world_) {
    fail(f.source + ": distributedInfo.world_size is " + std::to_string(f.world_size) + ", where " +
         first_ + " has " + std::to_string(world_) + ": the files are not one job");
  }
  RankSource& slot = files_[static_cast<std::size_t>(f.rank)];
  if (slot.given) {
    fail(f.source + ": distributedInfo.rank is " + std::to_string(f.rank) + ", as in " +
         slot.source + ": each rank's file must be given once");
  }
  slot = {f.source, f.rank, true};
  if (first_.empty()) first_ = f.source;
  ++given_;
  const Counts before = counts_;
  touched_.clear();
  first_p2p_.clear();
  convert(f);
  if (source_rank_ < 0 || f.rank < source_rank_) {  // the lowest rank is replicated
    source_rank_ = f.rank;
    source_counts_ = counts_ - before;
    source_comms_ = touched_;
    source_p2p_ = first_p2p_;
  }
}

TorchImport Importer::finish() {
  if (given_ != world_ && replicate_) replicate();
  if (given_ != world_) {
    std::string missing;
    int listed = 0;
    for (int r = 0; r < world_ && listed < 8; ++r) {
      if (!files_[static_cast<std::size_t>(r)].given)
        missing += (listed++ > 0 ? ", " : "") + std::to_string(r);
    }
    fail("import: the job has " + std::to_string(world_) +
         " ranks (distributedInfo.world_size) but " + std::to_string(given_) +
         " file(s) were given; missing rank(s) " + missing +
         (world_ - given_ > listed ? ", ..." : "") +
         "; give every rank's file or, if every rank issued the same collectives (SPMD, no "
         "pipeline stages), --replicate-missing-ranks builds the others from rank " +
         std::to_string(source_rank_) + "'s");
  }
  out_.trace.p2p_per_peer_streams = true;  // ProcessGroupNCCL: a stream per p2p peer pair
  check_collectives(out_.trace, files_);
  check_p2p(out_.trace, files_);
  for (const auto& [what, n] : counts_.skipped)
    out_.notes.push_back("skipped " + std::to_string(n) + " call(s) named '" + what + "'" +
                         (what == "wait" ? " (Work.wait(): waits come from the GPU timeline)"
                                         : " (not an operation TwinCCL replays)"));
  if (counts_.roots_assumed > 0)
    out_.notes.push_back(std::to_string(counts_.roots_assumed) +
                         " rooted call(s) did not record their root ('Rank'): root 0 assumed");
  if (counts_.without_kernel > 0)
    out_.notes.push_back(std::to_string(counts_.without_kernel) +
                         " op(s) had no NCCL kernel in the trace: timed at their CPU call, "
                         "no overlap with compute taken over");
  return std::move(out_);
}

int Importer::comm_index(const std::string& pg_name, const std::string& label,
                         const std::vector<int>& ranks, const std::string& where) {
  const auto key = std::make_pair(pg_name, ranks);
  const auto it = comms_.find(key);
  if (it != comms_.end()) return it->second;
  if (out_.trace.communicators.size() >= kMaxTraceCommunicators)
    fail("more than " + std::to_string(kMaxTraceCommunicators) + " process groups");
  const int index = static_cast<int>(out_.trace.communicators.size());
  out_.trace.communicators.push_back({label, ranks});
  origins_.push_back({pg_name, where});
  comms_.emplace(key, index);
  return index;
}

void Importer::add_to_totals(std::size_t ops, std::size_t events, const std::string& who) {
  ops_ += ops;
  events_ += events;
  if (ops_ > kMaxTraceOps || events_ > kMaxTraceEvents) {
    fail(who + ": the job has more than " + std::to_string(kMaxTraceOps) + " operations or " +
         std::to_string(kMaxTraceEvents) +
         " events on all ranks together (the trace's caps); profile a shorter window");
  }
}

void Importer::convert(const TorchRankFile& f) {
  const int world = world_;
  RankTrace& rt = out_.trace.ranks[static_cast<std::size_t>(f.rank)];
  std::vector<std::size_t> call_of_op;
  std::map<int, std::uint64_t> collective_seq;
  std::map<std::tuple<int, int, int>, std::uint64_t> p2p_seq;  // (comm, src, dst)
  struct Group {
    std::vector<int> ranks;
    int me, comm;
  };
  std::map<
      std::tuple<std::string, std::vector<int>, bool, std::int64_t, std::int64_t, std::int64_t>,
      Group>
      groups;
  for (std::size_t i = 0; i < f.calls.size(); ++i) {
    const TorchCommCall& c = f.calls[i];
    const std::string where = f.source + ": traceEvents[" + std::to_string(c.event) + "] (" +
                              c.collective.substr(0, 40) + ")";
    if (c.collective == "wait") {
      ++counts_.skipped["wait"];
      continue;
    }
    // A process group's members, this rank's place and the communicator, once per group
    // (a job issues thousands of calls on a few groups).
    const auto key = std::make_tuple(c.pg_name, c.pg_ranks, c.pg_ranks_known, c.group_size,
                                     c.global_start, c.global_stride);
    auto group = groups.find(key);
    if (group == groups.end()) {
      std::vector<int> members = members_of(c, world, where);
      const auto mine = std::find(members.begin(), members.end(), f.rank);
      if (mine == members.end()) {
        fail(where + ": this file is rank " + std::to_string(f.rank) +
             ", which is not in the call's process group");
      }
      const int me = static_cast<int>(mine - members.begin());
      const std::string label = !c.pg_desc.empty()   ? c.pg_desc
                                : !c.pg_name.empty() ? "pg " + c.pg_name
                                                     : "world";
      const int comm = comm_index(c.pg_name, label, members, where);
      group = groups.emplace(key, Group{std::move(members), me, comm}).first;
      if (std::find(touched_.begin(), touched_.end(), comm) == touched_.end())
        touched_.push_back(comm);
    }
    const std::vector<int>& ranks = group->second.ranks;
    const int me = group->second.me;
    TraceOp op;
    std::string skipped;
    bool root_assumed = false;
    if (!op_of_call(c, ranks, me, where, op, skipped, root_assumed)) {
      ++counts_.skipped[skipped.substr(0, 40)];
      continue;
    }
    if (root_assumed) ++counts_.roots_assumed;
    op.comm = group->second.comm;
    if (is_p2p(op.kind)) {
      if (first_p2p_.empty()) first_p2p_ = where + ", op " + std::to_string(rt.ops.size());
      const int src = op.kind == OpKind::send ? me : op.peer;
      const int dst = op.kind == OpKind::send ? op.peer : me;
      op.seq = p2p_seq[{op.comm, src, dst}]++;
    } else {
      op.seq = collective_seq[op.comm]++;
    }
    rt.ops.push_back(std::move(op));
    call_of_op.push_back(i);
  }
  std::vector<OpTimes> times;
  rt.events = timeline_events(f, call_of_op, times);
  add_to_totals(rt.ops.size(), rt.events.size(), f.source);
  double t0 = 0;
  if (!times.empty()) t0 = times.front().issue_us;
  for (std::size_t i = 0; i < rt.ops.size(); ++i) {
    rt.ops[i].async = times[i].async;
    rt.ops[i].issue_s = std::min((times[i].issue_us - t0) * 1e-6, kMaxTraceWallSeconds);
    rt.ops[i].complete_s = std::min((times[i].done_us - t0) * 1e-6, kMaxTraceWallSeconds);
    if (!times[i].has_kernel) ++counts_.without_kernel;
  }
}

}  // namespace detail

namespace {

TorchImport import_each(std::size_t files,
                        const std::function<detail::TorchRankFile(std::size_t)>& read,
                        const TorchImportOptions& options) {
  if (files == 0) detail::fail("import: no profiler trace given (one file per rank)");
  if (files > kMaxTorchTraceFiles) {
    detail::fail("import: " + std::to_string(files) + " files is over the cap of " +
                 std::to_string(kMaxTorchTraceFiles) + " ranks");
  }
  if (options.program.size() > kMaxTraceProgramBytes)
    detail::fail("import: the program text is too long");
  detail::Importer importer(options);
  for (std::size_t i = 0; i < files; ++i) importer.add(read(i));
  return importer.finish();
}

}  // namespace

TorchImport import_torch_traces(std::size_t files,
                                const std::function<TorchTraceText(std::size_t)>& read,
                                const std::string& program) {
  return import_each(files,
                     [&](std::size_t i) {
                       const TorchTraceText text = read(i);
                       return detail::read_torch_rank(text.source, text.text);
                     },
                     {.program = program});
}

TorchImport import_torch_traces(const std::vector<TorchTraceText>& files,
                                const TorchImportOptions& options) {
  return import_each(
      files.size(),
      [&](std::size_t i) { return detail::read_torch_rank(files[i].source, files[i].text); },
      options);
}

TorchImport import_torch_traces(const std::vector<TorchTraceText>& files,
                                const std::string& program) {
  return import_torch_traces(files, TorchImportOptions{.program = program});
}

TorchImport import_torch_trace_streams(std::size_t files,
                                       const std::function<TorchTraceStream(std::size_t)>& open,
                                       const TorchImportOptions& options) {
  return import_each(
      files,
      [&](std::size_t i) {
        TorchTraceStream s = open(i);
        if (!s.in) detail::fail("import: " + s.source + ": no stream to read");
        return detail::read_torch_rank(s.source, *s.in);
      },
      options);
}

}  // namespace twinccl::trace
