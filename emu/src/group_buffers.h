// Buffers shared across ranks between two collectives of one group (docs/misuse.md 53-57): on
// GPUs a group's collectives may run at once, so rank 0's first collective writing memory that
// rank 1's second one reads or writes is a race there; here ranks are threads of one process and
// the group's collectives run one after the other, so the result would silently depend on that
// order. The rendezvous checks the ranks of one collective (shared_buffers.h); this checks the
// pairs of different collectives of one group.
//
//   board.post(first_seq, rank, nranks, label, group_collectives);  // in run_group, before any
//                                                                   // of them meets its peers
//
// How it works: each rank whose group holds two or more collectives posts their byte ranges
// (output_range/input_range) under the group's first collective number before running any of
// them; the rank whose post completes the group checks them all and removes the entry. Sorted by
// start and swept once: a range is compared with the earlier ranges still open at its start
// (outputs with outputs and inputs, inputs with outputs), so O(N log N) for N ranges when the
// program is right. Pairs of one rank (its own order, as on NCCL) and of one collective (the
// rendezvous' check) are skipped. Nothing runs for a single call or a group of one collective;
// groups of more than kMaxGroupRanges ranges are not checked. The rank that completes the group
// throws InvalidArgument and aborts the world with the same text (the others wait in the group's
// first collective, which cannot complete without it), before anything is written.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "shared_buffers.h"

namespace twinccl::emu {

class GroupBoard {
 public:
  static constexpr std::size_t kMaxGroupRanges = std::size_t{1} << 16;

  // `collectives`: this rank's collectives of the group, in issue order (all ranks pass as many).
  // Returns "" or the text of the first overlap found (when this post completed the group).
  std::string post(std::uint64_t first_seq, int rank, int nranks, const std::string& label,
                   std::span<const OpDesc* const> collectives);

 private:
  struct Posted {
    ByteRange range;
    int op = 0;  // index of the collective in the group
    const char* file = "";
    std::uint_least32_t line = 0;
  };
  struct Entry {
    int posted = 0;
    bool skipped = false;  // over kMaxGroupRanges
    std::vector<Posted> ranges;
  };
  static std::string check(std::vector<Posted>& ranges, const std::string& label);

  std::mutex mu_;
  std::map<std::uint64_t, Entry> entries_;
};

}  // namespace twinccl::emu
