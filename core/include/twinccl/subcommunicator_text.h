// Texts about Communicator::subcommunicator shared by the emulator and the NCCL backend: a rank
// list as messages show it, and the MismatchError when two members asked for different things.
//
//   ranks_text({0, 2, 5}, 16)   // "[0,2,5]"
//   members_disagreement({1, "tp", {0, 1}, "train.py:12"}, {0, "tp", {0, 1, 2}, "train.py:9"},
//                        "world")
//   // "subcommunicator on comm 'world': rank 0 (train.py:9) asked for 'tp' of ranks [0,1,2] and
//   //  rank 1 (train.py:12) for 'tp' of ranks [0,1]; each lists the other, so neither ..."
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace twinccl {

// "[0,2,5]": the first `shown` ranks, then ",...] (N ranks)"; `total` (when larger than
// ranks.size()): how many the whole list holds, of which `ranks` is the start.
std::string ranks_text(std::span<const int> ranks, std::size_t shown, std::size_t total = 0);

// One member's call of subcommunicator: its rank, the name and ranks it passed (ranks of `comm`),
// and its call site.
struct MembersAsked {
  int rank = 0;
  std::string name;
  std::vector<int> ranks;  // (the start of the list when `total` is larger)
  std::string where;
  std::size_t total = 0;  // ranks listed, when more than `ranks` holds
};

// The MismatchError text: two members asked for different communicators (other ranks, order or
// name), each listing the other's rank, so they would never meet. The lower rank is named first,
// so every rank and backend tells it alike.
std::string members_disagreement(const MembersAsked& one, const MembersAsked& other,
                                 std::string_view comm);

}  // namespace twinccl
