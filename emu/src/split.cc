// EmuCommunicator::split: a collective over the parent communicator (it meets as "split"), after
// which every color's ranks share a new SharedComm ordered by (key, rank).
// EmuCommunicator::subcommunicator: the members only; the first to ask makes the SharedComm
// (the parent's MembersOnly), and every member meets the others on it once ("subcommunicator #0"),
// which gives it the deadline, the abort and the "returned without calling" messages of any
// collective, as ncclCommInitRank blocks until every rank joined.
#include <algorithm>
#include <map>

#include "communicator.h"
#include "executor.h"
#include "twinccl/call_site_text.h"
#include "twinccl/errors.h"
#include "twinccl/split_names.h"
#include "twinccl/subcommunicator_text.h"

namespace twinccl::emu {
namespace {

// What split() builds once per meeting: each color's communicator, or why its ranks cannot have
// one (they asked for different names).
struct SplitGroups {
  std::map<int, std::shared_ptr<SharedComm>> comms;
  std::map<int, std::string> name_mismatch;
};

// "" when every (key, rank) of `members` asked for the same name; else who asked for what.
std::string name_disagreement(const Meeting& m, int color,
                              const std::vector<std::pair<int, int>>& members,
                              const std::string& comm, std::uint64_t seq) {
  std::vector<SplitNameAsked> asked;
  for (auto [k, r] : members) {
    const OpDesc& op = m.ops[static_cast<std::size_t>(r)];
    asked.push_back({r, op.role, describe_call_site(op.where)});
  }
  return split_name_disagreement(comm, seq, color, asked);
}

}  // namespace

void EmuCommunicator::meet(std::string_view call, OpDesc& op, std::pair<int, int> split_arg,
                           const std::function<void(emu::Meeting&)>& with_meeting) {
  std::uint64_t seq = next_seq_++;
  auto work = new_work(main_, &op, seq, op.where);
  main_.last_work = work;
  if (main_.agent != nullptr) main_.agent->issued.fetch_add(1);
  main_.stream.run_or_enqueue(
      [&, raw = work.get(), at = op.where] {
        // Abandoned (the caller's wait threw, its frame is gone) or the communicator failed:
        // the peers would wait for this rank at the rendezvous, so the world aborts.
        if (!raw->begin_running() || failure_->failed() || shared_->world->aborted()) {
          std::string label = failure_->label(call, 0, at);
          std::exception_ptr why = failure_->cancellation(label);
          if (!why) why = std::make_exception_ptr(AbortedError(label + " was cancelled"));
          try {
            std::rethrow_exception(why);
          } catch (const std::exception& e) {
            shared_->world->abort(e.what());
          }
          std::rethrow_exception(why);
        }
        emu::Rendezvous& rdv = shared_->rendezvous;
        emu::WaitSite site = wait_site(main_, emu::WaitKind::collective, call, at, -1, seq);
        emu::Meeting& m = rdv.arrive(seq, rank_, op, call, split_arg, &site);
        try {
          emu::spec_from_meeting(m);  // every rank must be in this call (not another op)
        } catch (...) {
          m.wait_until_nobody_reads(rank_);
          rdv.leave(seq, m);
          throw;
        }
        with_meeting(m);
        rdv.leave(seq, m);
      },
      work);
  Work(work).wait();
}

std::unique_ptr<Communicator> EmuCommunicator::do_split(int color, int key, std::string new_name,
                                                        Where where) {
  refuse_other_ranks_thread("split", where);
  emu::SingleUser::Scope hold(
      user_, "split", where, [&] { return call_site_text("split", name(), rank_, where); },
      [this](const std::string& text) { refuse_second_thread(text); });
  OpDesc op;
  op.kind = OpKind::barrier;
  op.where = where;
  op.role = new_name;  // the name asked for: the members of each color must agree on it
  const std::uint64_t seq = next_seq_;
  std::shared_ptr<SharedComm> mine;
  int my_rank = -1;
  std::string name_mismatch;  // thrown on this thread after the meeting (the parent stays usable)
  meet("split", op, {color, key}, [&](emu::Meeting& m) {
    std::shared_ptr<SplitGroups> groups;
    {
      std::lock_guard<std::mutex> lock(m.mu);
      if (!m.shared) {
        auto made = std::make_shared<SplitGroups>();
        std::map<int, std::vector<std::pair<int, int>>> members;  // color -> (key, rank)
        for (int r = 0; r < m.nranks; ++r) {
          auto [c, k] = m.split_args[static_cast<std::size_t>(r)];
          if (c != kNoColor) members[c].push_back({k, r});
        }
        for (auto& [c, list] : members) {
          std::sort(list.begin(), list.end());
          std::string disagreement = name_disagreement(m, c, list, shared_->name, seq);
          if (!disagreement.empty()) {
            made->name_mismatch[c] = std::move(disagreement);
            continue;
          }
          const std::string& asked = m.ops[static_cast<std::size_t>(list[0].second)].role;
          std::vector<int> global;
          for (auto [k, r] : list)
            global.push_back(shared_->global_ranks[static_cast<std::size_t>(r)]);
          made->comms[c] = std::make_shared<SharedComm>(
              shared_->world, std::move(global),
              asked.empty() ? shared_->name + ".split(" + std::to_string(c) + ")" : asked,
              shared_->config);
        }
        m.shared = made;
      }
      groups = std::static_pointer_cast<SplitGroups>(m.shared);
    }
    if (auto bad = groups->name_mismatch.find(color); bad != groups->name_mismatch.end()) {
      name_mismatch = bad->second;
    } else if (color != kNoColor) {
      mine = groups->comms.at(color);
      for (int i = 0; i < mine->size(); ++i) {
        if (mine->global_ranks[static_cast<std::size_t>(i)] == global_rank()) my_rank = i;
      }
    }
  });
  if (!name_mismatch.empty()) throw MismatchError(name_mismatch);
  if (!mine) return nullptr;
  auto child = std::make_unique<EmuCommunicator>(mine, my_rank);
  child->depart_on_destroy();
  return child;
}

std::unique_ptr<Communicator> EmuCommunicator::do_subcommunicator(std::vector<int> ranks,
                                                                  int new_rank,
                                                                  std::string new_name,
                                                                  Where where) {
  refuse_other_ranks_thread("subcommunicator", where);
  emu::SingleUser::Scope hold(
      user_, "subcommunicator", where,
      [&] { return call_site_text("subcommunicator", name(), rank_, where); },
      [this](const std::string& text) { refuse_second_thread(text); });
  if (std::exception_ptr why = failure_->cancellation(failure_->label("subcommunicator", 0, where)))
    std::rethrow_exception(why);
  MembersAsked asked{rank_, new_name, ranks, describe_call_site(where)};
  emu::MembersOnly& registry = shared_->members_only;
  auto made = std::static_pointer_cast<SharedComm>(registry.join(asked, shared_->name, [&] {
    std::vector<int> global;
    for (int r : ranks) global.push_back(shared_->global_ranks[static_cast<std::size_t>(r)]);
    return std::make_shared<SharedComm>(shared_->world, std::move(global), new_name,
                                        shared_->config);
  }));
  auto child = std::make_unique<EmuCommunicator>(made, new_rank);
  child->depart_on_destroy();
  OpDesc op;
  op.kind = OpKind::barrier;
  op.where = where;
  op.role = new_name;
  try {
    child->meet("subcommunicator", op, {}, [](emu::Meeting&) {});
  } catch (...) {
    registry.done(asked, made, true);
    throw;
  }
  registry.done(asked, made, false);
  return child;
}

}  // namespace twinccl::emu
