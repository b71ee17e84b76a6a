#include "members_only.h"

#include <algorithm>

#include "twinccl/errors.h"

namespace twinccl::emu {
namespace {

bool lists(const std::vector<int>& ranks, int rank) {
  return std::find(ranks.begin(), ranks.end(), rank) != ranks.end();
}

}  // namespace

std::shared_ptr<void> MembersOnly::join(const MembersAsked& asked, const std::string& comm,
                                        const std::function<std::shared_ptr<void>()>& make) {
  std::lock_guard<std::mutex> lock(mu_);
  const Key key{asked.name, asked.ranks};
  // A member x that joined another entry listing this rank, and that this entry lists too: x
  // waits there for this rank, this rank would wait here for x.
  for (const auto& [other, pending] : pending_) {
    if (other == key || !lists(other.second, asked.rank)) continue;
    for (const MembersAsked& other_member : pending.joined) {
      if (lists(asked.ranks, other_member.rank))
        throw MismatchError(members_disagreement(asked, other_member, comm));
    }
  }
  Pending& entry = pending_[key];
  if (!entry.made) entry.made = make();
  entry.joined.push_back(asked);
  return entry.made;
}

void MembersOnly::done(const MembersAsked& asked, const std::shared_ptr<void>& made, bool failed) {
  std::lock_guard<std::mutex> lock(mu_);
  const auto it = pending_.find({asked.name, asked.ranks});
  if (it == pending_.end() || it->second.made != made) return;
  if (failed || it->second.joined.size() >= asked.ranks.size()) pending_.erase(it);
}

}  // namespace twinccl::emu
