// PyTorch profiler traces of one job -> one twinccl-trace (torch_import.h, docs/traces.md).
//
// How it works. Each file is read (torch_read.cc: the calls and the GPU timeline); the files must
// name every rank of one world once. Each call becomes an op (torch_ops.cc) on the communicator of
// its process group: the members are "Process Group Ranks", or the world when that list is absent
// or cut short and the group is the whole world, or "Global rank start/stride". Collectives are
// numbered per rank and communicator, send/recv per (sender, receiver); the GPU timeline gives
// the events (torch_timeline.cc). With replicate_missing_ranks, a rank without a file is a copy of
// the lowest given rank's ops and events, each op moved to its group's counterpart for that rank
// (torch_groups.cc). Then the files are checked to be one job (torch_agree.cc).
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

class Importer {
 public:
  explicit Importer(const TorchImportOptions& options)
      : replicate_(options.replicate_missing_ranks) {
    out_.trace.program = options.program;
  }

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

  TorchImport finish() {
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
    detail::check_collectives(out_.trace, files_);
    detail::check_p2p(out_.trace, files_);
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

 private:
  // The communicator of process group `pg_name` with these members; `where` names its first call.
  int comm_index(const std::string& pg_name, const std::string& label,
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

  void replicate();

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
        ++counts_.skipped["wait"];
        continue;
      }
      // A process group's members, this rank's place and the communicator, once per group
      // (a job issues thousands of calls on a few groups).
      const auto key = std::make_tuple(c.pg_name, c.pg_ranks, c.pg_ranks_known, c.group_size,
                                       c.global_start, c.global_stride);
      auto group = groups.find(key);
      if (group == groups.end()) {
        std::vector<int> members = detail::members_of(c, world, where);
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
      if (!detail::op_of_call(c, ranks, me, where, op, skipped, root_assumed)) {
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
    std::vector<detail::OpTimes> times;
    rt.events = detail::timeline_events(f, call_of_op, times);
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

  // The trace's caps on all ranks together, checked as ranks are added.
  void add_to_totals(std::size_t ops, std::size_t events, const std::string& who) {
    ops_ += ops;
    events_ += events;
    if (ops_ > kMaxTraceOps || events_ > kMaxTraceEvents) {
      fail(who + ": the job has more than " + std::to_string(kMaxTraceOps) + " operations or " +
           std::to_string(kMaxTraceEvents) +
           " events on all ranks together (the trace's caps); profile a shorter window");
    }
  }

  // What a rank's conversion counted, for the notes.
  struct Counts {
    std::map<std::string, std::size_t> skipped;
    std::size_t roots_assumed = 0, without_kernel = 0;
    Counts operator-(const Counts& o) const {
      Counts d{{}, roots_assumed - o.roots_assumed, without_kernel - o.without_kernel};
      for (const auto& [k, n] : skipped) {
        const auto it = o.skipped.find(k);
        const std::size_t diff = n - (it == o.skipped.end() ? 0 : it->second);
        if (diff > 0) d.skipped[k] = diff;
      }
      return d;
    }
    void add(const Counts& o, std::size_t times) {
      for (const auto& [k, n] : o.skipped) skipped[k] += n * times;
      roots_assumed += o.roots_assumed * times;
      without_kernel += o.without_kernel * times;
    }
  };
  struct Origin {
    std::string pg_name, where;  // the group's name and its first call ("r0.json: traceEvents[4]")
  };

  bool replicate_;
  std::vector<detail::RankSource> files_;  // indexed by rank
  int world_ = -1, given_ = 0;
  std::string first_;  // the first file's name
  TorchImport out_;
  std::map<std::pair<std::string, std::vector<int>>, int> comms_;
  std::vector<Origin> origins_;  // per communicator
  Counts counts_, source_counts_;
  int source_rank_ = -1;                     // the lowest rank given
  std::vector<int> touched_, source_comms_;  // its communicators, in the order it used them
  std::string first_p2p_, source_p2p_;       // its first send/recv ("r0.json: ...[9] (send), op 4")
  std::size_t ops_ = 0, events_ = 0;
};

}  // namespace

// The missing ranks as copies of the lowest given rank, each op on its group's counterpart.
void Importer::replicate() {
  const int from = source_rank_;
  const std::string by = "--replicate-missing-ranks (replicate_missing_ranks)";
  if (!source_p2p_.empty()) {
    fail(source_p2p_ + ": " + by +
         " cannot build the other ranks of a job with send/recv: pipeline stages and "
         "neighbour exchanges differ per rank; give every rank's file");
  }
  std::vector<int> missing;
  for (int r = 0; r < world_; ++r)
    if (!files_[static_cast<std::size_t>(r)].given) missing.push_back(r);
  std::vector<int> counterpart;
  std::string why;
  for (int c : source_comms_) {  // every group the profiled rank used must have counterparts
    const TraceCommunicator& comm = out_.trace.communicators[static_cast<std::size_t>(c)];
    if (!replicated_group(comm.ranks, from, from, world_, counterpart, why)) {
      fail(origins_[static_cast<std::size_t>(c)].where + ": " + by +
           " cannot tell the other ranks' counterparts of process group '" + comm.name +
           "' (ranks " + detail::rank_ranges(comm.ranks) + "): " + why +
           "; it needs the world or evenly strided blocks that tile it (docs/traces.md); give "
           "every rank's file");
    }
  }
  const RankTrace& src = out_.trace.ranks[static_cast<std::size_t>(from)];
  add_to_totals(src.ops.size() * missing.size(), src.events.size() * missing.size(), by);
  const std::string source = files_[static_cast<std::size_t>(from)].source;
  // A counterpart is the group of the same name and ranks (as in every rank's files), else the
  // one group of the same label and ranks another given file used (torch names sibling groups
  // apart), else a new one.
  std::map<std::pair<std::string, std::vector<int>>, std::vector<int>> by_label;
  for (std::size_t c = 0; c < out_.trace.communicators.size(); ++c) {
    const TraceCommunicator& comm = out_.trace.communicators[c];
    by_label[{comm.name, comm.ranks}].push_back(static_cast<int>(c));
  }
  for (int r : missing) {
    std::map<int, int> comm_of;  // the profiled rank's communicator -> rank r's
    for (int c : source_comms_) {
      const TraceCommunicator comm = out_.trace.communicators[static_cast<std::size_t>(c)];
      replicated_group(comm.ranks, from, r, world_, counterpart, why);
      const Origin origin = origins_[static_cast<std::size_t>(c)];
      const auto named = comms_.find({origin.pg_name, counterpart});
      const auto labelled = by_label.find({comm.name, counterpart});
      comm_of[c] = named != comms_.end() ? named->second
                   : labelled != by_label.end() && labelled->second.size() == 1
                       ? labelled->second.front()
                       : comm_index(origin.pg_name, comm.name, counterpart, origin.where);
    }
    RankTrace copy = src;
    for (TraceOp& op : copy.ops) op.comm = comm_of.at(op.comm);
    out_.trace.ranks[static_cast<std::size_t>(r)] = std::move(copy);
    files_[static_cast<std::size_t>(r)] = {source + " as rank " + std::to_string(r), r, true};
    ++given_;
  }
  counts_.add(source_counts_, missing.size());
  out_.replicated_from = from;
  out_.replicated = missing;
  const std::string ranks =
      "ranks " + detail::rank_ranges(missing) + " replicated from rank " + std::to_string(from);
  std::string& program = out_.trace.program;
  const std::string suffix = " [" + ranks + "'s profile: --replicate-missing-ranks]";
  if (program.size() + suffix.size() > kMaxTraceProgramBytes)
    program = program.substr(0, kMaxTraceProgramBytes - suffix.size() - 3) + "...";
  program += suffix;
  out_.notes.push_back(ranks + " (" + source +
                       "): every rank is assumed to have issued the same collectives (SPMD)");
  const auto uneven = std::count_if(src.ops.begin(), src.ops.end(), [](const TraceOp& op) {
    return op.kind == OpKind::all_to_all_v;
  });
  if (uneven > 0) {
    out_.notes.push_back(std::to_string(uneven) + " all_to_all_v op(s) copied with rank " +
                         std::to_string(from) +
                         "'s splits: uneven exchanges (MoE routing) differ per rank in a real job");
  }
}

namespace {

TorchImport import_each(std::size_t files,
                        const std::function<detail::TorchRankFile(std::size_t)>& read,
                        const TorchImportOptions& options) {
  if (files == 0) fail("import: no profiler trace given (one file per rank)");
  if (files > kMaxTorchTraceFiles) {
    fail("import: " + std::to_string(files) + " files is over the cap of " +
         std::to_string(kMaxTorchTraceFiles) + " ranks");
  }
  if (options.program.size() > kMaxTraceProgramBytes) fail("import: the program text is too long");
  Importer importer(options);
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
        if (!s.in) fail("import: " + s.source + ": no stream to read");
        return detail::read_torch_rank(s.source, *s.in);
      },
      options);
}

}  // namespace twinccl::trace
