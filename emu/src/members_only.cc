#include "members_only.h"

#include <algorithm>

#include "twinccl/errors.h"

namespace twinccl::emu {

std::shared_ptr<void> MembersOnly::join(const MembersAsked& asked, const std::string& comm,
                                        const std::function<std::shared_ptr<void>()>& make) {
  std::vector<int> sorted = asked.ranks;  // looked up once per joined member below
  std::sort(sorted.begin(), sorted.end());
  auto lists_rank = [&](int rank) {
    return std::binary_search(sorted.begin(), sorted.end(), rank);
  };
  std::lock_guard<std::mutex> lock(mu_);
  const Key key{asked.name, asked.ranks};
  // A member x that joined another entry listing this rank, and that this entry lists too: x
  // waits there for this rank, this rank would wait here for x.
  for (const auto& [other, pending] : pending_) {
    if (other == key ||
        std::find(other.second.begin(), other.second.end(), asked.rank) == other.second.end())
      continue;
    for (const auto& [rank, where] : pending.joined) {
      if (lists_rank(rank)) {
        throw MismatchError(
            members_disagreement(asked, {rank, other.first, other.second, where}, comm));
      }
    }
  }
  Pending& entry = pending_[key];
  if (!entry.made) entry.made = make();
  entry.joined.emplace_back(asked.rank, asked.where);
  return entry.made;
}

void MembersOnly::done(const MembersAsked& asked, const std::shared_ptr<void>& made, bool failed) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = pending_.find({asked.name, asked.ranks});
  if (it == pending_.end() || it->second.made != made) return;
  if (failed || it->second.joined.size() >= asked.ranks.size()) pending_.erase(it);
}

}  // namespace twinccl::emu
