// Process groups of the PyTorch trace importer (torch_import.h): a call's group members
// (members_of: "Process Group Ranks", the world, or "Global rank start/stride"), and the rule of
// TorchImportOptions::replicate_missing_ranks (replicated_group): which group a rank whose profile
// is missing would have used where the profiled rank used a given one.
//
// How the rule works. torch.distributed programs build their groups by a layout over the world
// ranks: tensor-parallel groups are contiguous blocks, data-parallel groups take every d-th rank
// within a block of g*d (Megatron-LM's and DeviceMesh's layouts); every rank creates the same
// layout. So a group of g ranks d apart, s, s+d, ..., s+(g-1)d, whose block of g*d ranks tiles the
// world and starts where the profiled rank's block does, has one counterpart per (block, offset):
//
//   world 8, tp = 2, dp = 4     tp groups (d = 1, g = 2): {0,1} {2,3} {4,5} {6,7}
//                               dp groups (d = 2, g = 4): {0,2,4,6} {1,3,5,7}
//   rank 0 profiled, rank 5 missing: {0,1} -> {4,5}; {0,2,4,6} -> {1,3,5,7}
//
// A group of every rank is its own counterpart; a group of one rank is {rank}. Anything else
// (a hand-picked list, blocks that do not tile the world) cannot be told and is refused.
#include <algorithm>
#include <numeric>
#include <string>

#include "torch_read.h"
#include "twinccl/errors.h"
#include "twinccl/trace/torch_import.h"

namespace twinccl::trace {

bool replicated_group(const std::vector<int>& members, int seen, int rank, int world,
                      std::vector<int>& out, std::string& why) {
  out.clear();
  if (world < 1 || rank < 0 || rank >= world || seen < 0 || seen >= world) {
    why = "rank " + std::to_string(rank < 0 || rank >= world ? rank : seen) +
          " is outside the world of " + std::to_string(world);
    return false;
  }
  const auto g = static_cast<long long>(members.size());
  if (g == 0) {
    why = "it has no ranks";
    return false;
  }
  if (std::find(members.begin(), members.end(), seen) == members.end()) {
    why = "rank " + std::to_string(seen) + " is not in it";
    return false;
  }
  if (g == world) {  // every rank is in it: the same group for all
    out = members;
    return true;
  }
  if (g == 1) {
    out = {rank};
    return true;
  }
  const long long s = members[0];
  const long long d = static_cast<long long>(members[1]) - s;
  if (d < 1) {
    why = "its ranks are not in ascending order";
    return false;
  }
  for (long long i = 0; i < g; ++i) {
    if (members[static_cast<std::size_t>(i)] != s + i * d) {
      why = "its ranks are not evenly spaced (rank " + std::to_string(s + i * d) + " expected at " +
            std::to_string(i) + ", found " + std::to_string(members[static_cast<std::size_t>(i)]) +
            ")";
      return false;
    }
  }
  const long long block = g * d;  // <= world: the members are distinct ranks below world
  if (world % block != 0) {
    why = std::to_string(g) + " ranks " + std::to_string(d) + " apart make blocks of " +
          std::to_string(block) + " ranks, which do not tile the world of " + std::to_string(world);
    return false;
  }
  const auto start = [&](long long r) { return r / block * block + r % d; };
  if (start(seen) != s) {
    why = "it starts at rank " + std::to_string(s) + ", not where rank " + std::to_string(seen) +
          "'s block of " + std::to_string(block) + " ranks does (" + std::to_string(start(seen)) +
          ")";
    return false;
  }
  const long long first = start(rank);
  for (long long i = 0; i < g; ++i) out.push_back(static_cast<int>(first + i * d));
  return true;
}

namespace detail {

// The world ranks of the call's process group (see the file comment).
std::vector<int> members_of(const TorchCommCall& c, int world, const std::string& where) {
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
        throw ConfigError(where + ": 'Global rank start/stride' name rank " + std::to_string(r) +
                          ", outside the world of " + std::to_string(world));
      ranks.push_back(static_cast<int>(r));
    }
  } else {
    throw ConfigError(
        where + ": the members of process group '" + c.pg_name + "' (" +
        std::to_string(c.group_size) + " of " + std::to_string(world) +
        " ranks) are unknown: 'Process Group Ranks' is absent or cut short and there is no "
        "'Global rank start/stride'");
  }
  if (c.group_size >= 0 && c.group_size != static_cast<std::int64_t>(ranks.size())) {
    throw ConfigError(where + ": 'Group size' is " + std::to_string(c.group_size) +
                      " but 'Process Group Ranks' lists " + std::to_string(ranks.size()) +
                      " ranks");
  }
  std::vector<char> seen(static_cast<std::size_t>(world), 0);
  for (int r : ranks) {
    if (r < 0 || r >= world || seen[static_cast<std::size_t>(r)]++) {
      throw ConfigError(where + ": 'Process Group Ranks' lists rank " + std::to_string(r) +
                        (r >= world ? " outside the world of " + std::to_string(world) : " twice"));
    }
  }
  return ranks;
}

std::string rank_ranges(const std::vector<int>& ranks) {
  std::string out;
  std::size_t shown = 0;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (shown++ == 8) return out + ", ...";
    out += (i > 0 ? ", " : "") + std::to_string(ranks[i]);
    if (j > i) out += "-" + std::to_string(ranks[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace detail
}  // namespace twinccl::trace
