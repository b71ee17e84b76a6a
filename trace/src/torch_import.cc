// PyTorch profiler traces of one job -> one twinccl-trace (torch_import.h, docs/traces.md).
//
// How it works. Each file is read (torch_read.cc: the calls and the GPU timeline); the files must
// name every rank of one world once. Each call becomes an op (torch_ops.cc) on the communicator of
// its process group: the members are "Process Group Ranks", or the world when that list is absent
// or cut short and the group is the whole world, or "Global rank start/stride". Collectives are
// numbered per rank and communicator, send/recv per (sender, receiver); the GPU timeline gives
// the events (torch_timeline.cc). Then the files are checked to be one job (torch_agree.cc).
#include "twinccl/trace/torch_import.h"

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <tuple>

#include "torch_read.h"
#include "twinccl/errors.h"

namespace twinccl::trace {
namespace {

using detail::TorchRankFile;

[[noreturn]] void fail(const std::string& what) { throw ConfigError(what); }

// The world ranks of the call's process group (see the file comment).
std::vector<int> members_of(const detail::TorchCommCall& c, int world, const std::string& where) {
  std::vector<int> ranks;
  if (c.pg_ranks_known) {
    ranks = c.pg_ranks;
  } else if (c.group_size < 0 || c.group_size == world) {
    ranks.resize(static_cast<std::size_t>(world));
    std::iota(ranks.begin(), ranks.end(), 0);
  } else if (c.global_start >= 0 && c.global_stride > 0 && c.group_size > 0) {
    for (std::int64_t i = 0; i < c.group_size; ++i) {
      const std::int64_t r = c.global_start + i * c.global_stride;
      if (r >= world)
        fail(where + ": 'Global rank start/stride' name rank " + std::to_string(r) +
             ", outside the world of " + std::to_string(world));
      ranks.push_back(static_cast<int>(r));
    }
  } else {
    fail(where + ": the members of process group '" + c.pg_name + "' (" +
         std::to_string(c.group_size) + " of " + std::to_string(world) +
         " ranks) are unknown: 'Process Group Ranks' is absent or cut short and there is no "
         "'Global rank start/stride'");
  }
  if (c.group_size >= 0 && c.group_size != static_cast<std::int64_t>(ranks.size())) {
    fail(where + ": 'Group size' is " + std::to_string(c.group_size) +
         " but 'Process Group Ranks' lists " + std::to_string(ranks.size()) + " ranks");
  }
  std::vector<char> seen(static_cast<std::size_t>(world), 0);
  for (int r : ranks) {
    if (r < 0 || r >= world || seen[static_cast<std::size_t>(r)]++) {
      fail(where + ": 'Process Group Ranks' lists rank " + std::to_string(r) +
           (r >= world ? " outside the world of " + std::to_string(world) : " twice"));
    }
  }
  return ranks;
}

class Importer {
 public:
  explicit Importer(const std::string& program) { out_.trace.program = program; }

  // One rank's file: converted at once, so only its name stays (a job's files together are
  // gigabytes).
  void add(const TorchRankFile& f) {
    if (world_ < 0) {
      world_ = f.world_size;
      out_.trace.ranks.resize(static_cast<std::size_t>(world_));
      files_.resize(static_cast<std::size_t>(world_));
    } else if (f.world_size != world_) {
      fail(f.source + ": distributedInfo.world_size is " + std::to_string(f.world_size) +
           ", where " + first_ + " has " + std::to_string(world_) + ": the files are not one job");
    }
    detail::RankSource& slot = files_[static_cast<std::size_t>(f.rank)];
    if (slot.given) {
      fail(f.source + ": distributedInfo.rank is " + std::to_string(f.rank) + ", as in " +
           slot.source + ": each rank's file must be given once");
    }
    slot = {f.source, f.rank, true};
    if (first_.empty()) first_ = f.source;
    ++given_;
    convert(f);
  }

  TorchImport finish() {
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
           (world_ - given_ > listed ? ", ..." : ""));
    }
    out_.trace.p2p_per_peer_streams = true;  // ProcessGroupNCCL: a stream per p2p peer pair
    detail::check_collectives(out_.trace, files_);
    detail::check_p2p(out_.trace, files_);
    for (const auto& [what, n] : skipped_)
      out_.notes.push_back("skipped " + std::to_string(n) + " call(s) named '" + what + "'" +
                           (what == "wait" ? " (Work.wait(): waits come from the GPU timeline)"
                                           : " (not an operation TwinCCL replays)"));
    if (roots_assumed_ > 0)
      out_.notes.push_back(std::to_string(roots_assumed_) +
                           " rooted call(s) did not record their root ('Rank'): root 0 assumed");
    if (without_kernel_ > 0)
      out_.notes.push_back(std::to_string(without_kernel_) +
                           " op(s) had no NCCL kernel in the trace: timed at their CPU call, "
                           "no overlap with compute taken over");
    return std::move(out_);
  }

 private:
  int comm_index(const detail::TorchCommCall& c, const std::vector<int>& ranks) {
    const auto key = std::make_pair(c.pg_name, ranks);
    const auto it = comms_.find(key);
    if (it != comms_.end()) return it->second;
    if (out_.trace.communicators.size() >= kMaxTraceCommunicators)
      fail("more than " + std::to_string(kMaxTraceCommunicators) + " process groups");
    std::string label = !c.pg_desc.empty()   ? c.pg_desc
                        : !c.pg_name.empty() ? "pg " + c.pg_name
                                             : "world";
    const int index = static_cast<int>(out_.trace.communicators.size());
    out_.trace.communicators.push_back({std::move(label), ranks});
    comms_.emplace(key, index);
    return index;
  }

  void convert(const TorchRankFile& f) {
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
      const detail::TorchCommCall& c = f.calls[i];
      const std::string where = f.source + ": traceEvents[" + std::to_string(c.event) + "] (" +
                                c.collective.substr(0, 40) + ")";
      if (c.collective == "wait") {
        ++skipped_["wait"];
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
        const int comm = comm_index(c, members);
        group = groups.emplace(key, Group{std::move(members), me, comm}).first;
      }
      const std::vector<int>& ranks = group->second.ranks;
      const int me = group->second.me;
      TraceOp op;
      std::string skipped;
      bool root_assumed = false;
      if (!detail::op_of_call(c, ranks, me, where, op, skipped, root_assumed)) {
        ++skipped_[skipped.substr(0, 40)];
        continue;
      }
      if (root_assumed) ++roots_assumed_;
      op.comm = group->second.comm;
      if (is_p2p(op.kind)) {
        const int src = op.kind == OpKind::send ? me : op.peer;
        const int dst = op.kind == OpKind::send ? op.peer : me;
        op.seq = p2p_seq[{op.comm, src, dst}]++;
      } else {
        op.seq = collective_seq[op.comm]++;
      }
      rt.ops.push_back(std::move(op));
      call_of_op.push_back(i);
    }
    std::vector<detail::OpTimes> times;
    rt.events = detail::timeline_events(f, call_of_op, times);
    double t0 = 0;
    if (!times.empty()) t0 = times.front().issue_us;
    for (std::size_t i = 0; i < rt.ops.size(); ++i) {
      rt.ops[i].async = times[i].async;
      rt.ops[i].issue_s = std::min((times[i].issue_us - t0) * 1e-6, kMaxTraceWallSeconds);
      rt.ops[i].complete_s = std::min((times[i].done_us - t0) * 1e-6, kMaxTraceWallSeconds);
      if (!times[i].has_kernel) ++without_kernel_;
    }
  }

  std::vector<detail::RankSource> files_;  // indexed by rank
  int world_ = -1, given_ = 0;
  std::string first_;  // the first file's name
  TorchImport out_;
  std::map<std::pair<std::string, std::vector<int>>, int> comms_;
  std::map<std::string, std::size_t> skipped_;
  std::size_t roots_assumed_ = 0, without_kernel_ = 0;
};

}  // namespace

TorchImport import_torch_traces(std::size_t files,
                                const std::function<TorchTraceText(std::size_t)>& read,
                                const std::string& program) {
  if (files == 0) fail("import: no profiler trace given (one file per rank)");
  if (files > kMaxTorchTraceFiles) {
    fail("import: " + std::to_string(files) + " files is over the cap of " +
         std::to_string(kMaxTorchTraceFiles) + " ranks");
  }
  if (program.size() > kMaxTraceProgramBytes) fail("import: the program text is too long");
  Importer importer(program);
  for (std::size_t i = 0; i < files; ++i) {
    const TorchTraceText text = read(i);
    importer.add(detail::read_torch_rank(text.source, text.text));
  }
  return importer.finish();
}

TorchImport import_torch_traces(const std::vector<TorchTraceText>& files,
                                const std::string& program) {
  return import_torch_traces(
      files.size(), [&](std::size_t i) { return files[i]; }, program);
}

}  // namespace twinccl::trace
