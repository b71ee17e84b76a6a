#include "twinccl/subcommunicator_text.h"

#include <algorithm>

namespace twinccl {

std::string ranks_text(std::span<const int> ranks, std::size_t shown, std::size_t total) {
  total = std::max(total, ranks.size());
  std::string text = "[";
  for (std::size_t i = 0; i < ranks.size() && i < shown; ++i) {
    if (i > 0) text += ',';
    text += std::to_string(ranks[i]);
  }
  if (total > std::min(shown, ranks.size()))
    return text + ",...] (" + std::to_string(total) + " ranks)";
  return text + "]";
}

std::string members_disagreement(const MembersAsked& one, const MembersAsked& other,
                                 std::string_view comm) {
  const MembersAsked& a = one.rank <= other.rank ? one : other;  // the same text on every rank
  const MembersAsked& b = one.rank <= other.rank ? other : one;
  auto shown = [](const std::string& name) {
    return "'" + (name.size() > 80 ? name.substr(0, 80) + "..." : name) + "'";
  };
  return "subcommunicator on comm '" + std::string(comm) + "': rank " + std::to_string(a.rank) +
         " (" + a.where + ") asked for " + shown(a.name) + " of ranks " +
         ranks_text(a.ranks, 16, a.total) + " and rank " + std::to_string(b.rank) + " (" + b.where +
         ") for " + shown(b.name) + " of ranks " + ranks_text(b.ranks, 16, b.total) +
         "; each lists the other, so neither can complete: every member must pass the same "
         "ranks, in the same order, and the same name";
}

}  // namespace twinccl
