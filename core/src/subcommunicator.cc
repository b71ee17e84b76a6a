// Communicator::subcommunicator: the checks every backend needs before its members-only creation
// (the backend's do_subcommunicator), then the observer's view of the child.
#include <algorithm>
#include <string>
#include <vector>

#include "make_op.h"
#include "thread_group.h"
#include "twinccl/call_observer.h"
#include "twinccl/call_site_text.h"
#include "twinccl/communicator.h"
#include "twinccl/split_names.h"
#include "twinccl/subcommunicator_text.h"

namespace twinccl {
namespace {

constexpr std::string_view kCall = "subcommunicator";

// "world.sub[0,2,5]", or "sub[0,1,2,...] (300 ranks)" when the parent's name and the list do not
// fit in a communicator's name.
std::string default_name(const std::string& parent, std::span<const int> ranks) {
  std::string list = ranks_text(ranks, 16);
  std::string made = parent + ".sub" + list;
  if (made.size() <= kMaxCommNameBytes) return made;
  return "sub" + ranks_text(ranks, 8);
}

}  // namespace

std::unique_ptr<Communicator> Communicator::subcommunicator(std::span<const int> ranks,
                                                            std::string new_name, Where where) {
  if (thread_group_of_other(this)) reject_call(*this, kCall, where, thread_group_refusal());
  if (thread_group_of(this)) {
    reject_call(*this, kCall, where,
                "subcommunicator inside the group opened at " +
                    describe_call_site(thread_group_start()) + " (call group_end first)");
  }
  if (ranks.empty()) {
    reject_call(*this, kCall, where,
                "ranks is empty: list the new communicator's ranks, this rank among them");
  }
  if (ranks.size() > static_cast<std::size_t>(size())) {
    reject_call(*this, kCall, where,
                "ranks lists " + std::to_string(ranks.size()) + " ranks, comm '" + name() +
                    "' has " + std::to_string(size()));
  }
  std::vector<std::pair<int, std::size_t>> seen;  // (rank, index in ranks), sorted by rank
  int new_rank = -1;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const int r = ranks[i];
    if (r < 0 || r >= size()) {
      reject_call(*this, kCall, where,
                  "ranks[" + std::to_string(i) + "] = " + std::to_string(r) +
                      " is not a rank of comm '" + name() + "' (0.." + std::to_string(size() - 1) +
                      ")");
    }
    if (r == rank()) new_rank = static_cast<int>(i);
    seen.emplace_back(r, i);
  }
  std::sort(seen.begin(), seen.end());
  for (std::size_t i = 1; i < seen.size(); ++i) {
    if (seen[i].first == seen[i - 1].first) {
      reject_call(*this, kCall, where,
                  "rank " + std::to_string(seen[i].first) + " is listed twice (ranks[" +
                      std::to_string(seen[i - 1].second) + "] and ranks[" +
                      std::to_string(seen[i].second) + "])");
    }
  }
  if (new_rank < 0) {
    reject_call(*this, kCall, where,
                "this rank (" + std::to_string(rank()) + ") is not in ranks " +
                    ranks_text(ranks, 16) +
                    ": only the members call subcommunicator; split() is the call every rank "
                    "makes");
  }
  if (std::string why = split_name_problem(new_name); !why.empty())
    reject_call(*this, kCall, where, why);
  if (new_name.empty()) new_name = default_name(name(), ranks);
  std::unique_ptr<Communicator> child = do_subcommunicator(
      std::vector<int>(ranks.begin(), ranks.end()), new_rank, std::move(new_name), where);
  const std::shared_ptr<CallObserver> observer = observer_;
  if (observer && child) child->observe(observer->subcommunicator(*this, *child, ranks));
  return child;
}

}  // namespace twinccl
