// EmuCommunicator::split: a collective over the parent communicator (it meets as "split"), after
// which every color's ranks share a new SharedComm ordered by (key, rank).
#include <algorithm>
#include <map>

#include "communicator.h"
#include "executor.h"
#include "twinccl/call_site_text.h"
#include "twinccl/errors.h"
#include "twinccl/split_names.h"

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
  std::uint64_t seq = next_seq_++;
  std::shared_ptr<SharedComm> mine;
  int my_rank = -1;
  std::string name_mismatch;  // thrown on this thread after the meeting (the parent stays usable)
  auto work = new_work(main_, &op, seq, where);
  main_.last_work = work;
  if (main_.agent != nullptr) main_.agent->issued.fetch_add(1);
  main_.stream.run_or_enqueue(
      [&, raw = work.get(), at = where] {
        // Abandoned (the caller's wait threw, its frame is gone) or the communicator failed:
        // the peers would wait for this rank at the rendezvous, so the world aborts.
        if (!raw->begin_running() || failure_->failed() || shared_->world->aborted()) {
          std::string label = failure_->label("split", 0, at);
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
        emu::WaitSite site = wait_site(main_, emu::WaitKind::collective, "split", where, -1, seq);
        emu::Meeting& m = rdv.arrive(seq, rank_, op, "split", {color, key}, &site);
        try {
          emu::spec_from_meeting(m);  // every rank must be in split (not a barrier or another op)
        } catch (...) {
          m.wait_until_nobody_reads(rank_);
          rdv.leave(seq, m);
          throw;
        }
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
        rdv.leave(seq, m);
      },
      work);
  Work(work).wait();
  if (!name_mismatch.empty()) throw MismatchError(name_mismatch);
  if (!mine) return nullptr;
  auto child = std::make_unique<EmuCommunicator>(mine, my_rank);
  child->depart_on_destroy();
  return child;
}

}  // namespace twinccl::emu
