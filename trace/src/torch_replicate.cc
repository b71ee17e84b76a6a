// TorchImportOptions::replicate_missing_ranks (torch_import.h, docs/traces.md): the ranks without
// a file built from the lowest given rank's.
//
// How it works. The profiled rank's ops and events are copied to every missing rank r, each op
// moved to r's counterpart of the op's group (replicated_group, torch_groups.cc: the world is its
// own counterpart, evenly strided blocks have one per block and offset). Roots and counts stay as
// they are: an SPMD job issues the same collectives on every rank. Refused with a ConfigError
// naming the op or the group: send/recv (pipeline stages differ per rank), a group with no
// derivable counterparts, totals past the trace's caps.
#include <algorithm>
#include <map>

#include "torch_importer.h"
#include "twinccl/errors.h"
#include "twinccl/utf8_text.h"

namespace twinccl::trace::detail {
namespace {

[[noreturn]] void fail(const std::string& what) { throw ConfigError(what); }

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
           "' (ranks " + rank_ranges(comm.ranks) + "): " + why +
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
  // Rank r's counterpart of a group is told by its block (the rule above: one per block and
  // offset, keyed here by the rank it starts at), so each counterpart is built and looked up once:
  // per rank and group it was O(group size) (65536 ranks from one file: 41 s, 16 GB copied).
  std::map<std::pair<int, long long>, int> resolved;  // (group, its counterpart's key) -> comm
  const auto key_of = [&](const std::vector<int>& members, int r) -> long long {
    const auto g = static_cast<long long>(members.size());
    if (g == world_) return 0;
    if (g == 1) return r;
    const long long d = static_cast<long long>(members[1]) - members[0];
    return r / (g * d) * (g * d) + r % d;
  };
  for (int r : missing) {
    std::map<int, int> comm_of;  // the profiled rank's communicator -> rank r's
    for (int c : source_comms_) {
      const long long key = key_of(out_.trace.communicators[static_cast<std::size_t>(c)].ranks, r);
      if (const auto hit = resolved.find({c, key}); hit != resolved.end()) {
        comm_of[c] = hit->second;
        continue;
      }
      const TraceCommunicator comm = out_.trace.communicators[static_cast<std::size_t>(c)];
      replicated_group(comm.ranks, from, r, world_, counterpart, why);
      const Origin origin = origins_[static_cast<std::size_t>(c)];
      const auto named = comms_.find({origin.pg_name, counterpart});
      const auto labelled = by_label.find({comm.name, counterpart});
      comm_of[c] = named != comms_.end() ? named->second
                   : labelled != by_label.end() && labelled->second.size() == 1
                       ? labelled->second.front()
                       : comm_index(origin.pg_name, comm.name, counterpart, origin.where);
      resolved[{c, key}] = comm_of[c];
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
  const std::string ranks = (missing.size() == 1 ? "rank " : "ranks ") + rank_ranges(missing) +
                            " replicated from rank " + std::to_string(from);
  std::string& program = out_.trace.program;
  const std::string suffix = " [" + ranks + "'s profile: --replicate-missing-ranks]";
  if (program.size() + suffix.size() > kMaxTraceProgramBytes)
    program = cut_utf8(program, kMaxTraceProgramBytes - suffix.size() - 3) + "...";
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

}  // namespace twinccl::trace::detail
