// MembersOnly: the communicators being made from one communicator by their members only
// (Communicator::subcommunicator), kept by the parent's SharedComm.
//
//   std::shared_ptr<void> made = parent.members_only.join(asked, "world", [&] { return make(); });
//   ... every member meets the others on it (the members' barrier), then:
//   parent.members_only.done(asked, made, failed);
//
// How it works: an entry per (name, ranks) asked for and not yet joined by every member.
// The first member to ask makes the shared part; the others get the same one; the entry goes once
// every member joined, or when a member's meeting on it failed (the communicator is then broken;
// a member asking again gets a new one). A member whose call can never meet (a rank it lists
// already waits in another entry that lists it) gets MismatchError instead of waiting for ever.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "twinccl/subcommunicator_text.h"

namespace twinccl::emu {

class MembersOnly {
 public:
  // `asked.rank` and `asked.ranks` are ranks of the parent, named `comm` in messages.
  std::shared_ptr<void> join(const MembersAsked& asked, const std::string& comm,
                             const std::function<std::shared_ptr<void>()>& make);
  // The member's meeting on `made` ended (either way): an entry still holding it is dropped
  // once every member joined, or at once when the meeting failed.
  void done(const MembersAsked& asked, const std::shared_ptr<void>& made, bool failed);

 private:
  using Key = std::pair<std::string, std::vector<int>>;  // (name, ranks)
  struct Pending {
    std::shared_ptr<void> made;
    std::vector<std::pair<int, std::string>> joined;  // (rank, call site), in arrival order
  };
  std::mutex mu_;
  std::map<Key, Pending> pending_;
};

}  // namespace twinccl::emu
