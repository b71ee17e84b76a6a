// EmuCommunicator's groups: operations between group_start and the outermost group_end are queued
// and issued together as one stream task with one Work. Until then that Work cannot complete, so
// waiting on it throws (it names the group_start). A group an exception abandoned (Group's
// destructor calls group_abort) is discarded: never issued, its Work fails with AbortedError, its
// collective numbers given back so the next collective meets its peers at the right number.
#include <algorithm>

#include "communicator.h"
#include "twinccl/call_site_text.h"
#include "twinccl/errors.h"

namespace twinccl::emu {
void EmuCommunicator::finish_unlaunched(const std::shared_ptr<emu::EmuWork>& work,
                                        std::exception_ptr error) {
  work->group_ended();
  work->mark_inert();  // its task only reports `error`
  main_.last_work = work;
  if (main_.agent != nullptr) main_.agent->issued.fetch_add(1);
  try {
    main_.stream.run_or_enqueue(
        [error] {
          if (error) std::rethrow_exception(error);
        },
        work);
  } catch (const ResourceError&) {  // `work` completed with it; the error that matters is `error`
  }
}

void EmuCommunicator::do_group_start(Where where) {
  refuse_other_ranks_thread("group_start", where);
  // The open group holds the communicator for this thread until its group_end (single_user.h).
  std::string_view other_op;
  Where other_where;
  if (!user_.try_enter("group_start", where, &other_op, &other_where)) {
    std::string text = emu::SingleUser::refusal(call_site_text("group_start", name(), rank_, where),
                                                other_op, other_where);
    refuse_second_thread(text);
    throw InvalidArgument(text);
  }
  try {
    if (group_depth_++ == 0) {
      group_where_ = where;
      group_abandoned_.clear();
      group_work_ =
          new_work(main_, nullptr, 0, where);  // every call inside the group returns this Work
      group_work_->hold_until_group_end(name(), rank_, where);
    }
  } catch (...) {
    user_.leave();
    throw;
  }
}

void EmuCommunicator::discard_group(std::exception_ptr error) {
  auto ops = std::move(group_ops_);
  group_ops_.clear();
  auto work = std::move(group_work_);
  group_work_.reset();
  record_states(ops, emu::OpState::failed);
  for (const Issued& i : ops) {
    if (!is_p2p(i.op.kind)) --next_seq_;  // never issued: the next collective takes its number
  }
  finish_unlaunched(work, error);
}

bool EmuCommunicator::do_group_abort(Where where) noexcept {
  std::string_view other_op;
  Where other_where;
  // Another thread's group is not this caller's to close (its own calls are refused meanwhile).
  if (!user_.try_enter("group_abort", where, &other_op, &other_where)) return true;
  const int depth = group_depth_;
  abort_group_level(where);
  user_.leave();
  if (group_depth_ < depth) user_.leave();  // the level's hold, taken by its group_start
  return true;
}

void EmuCommunicator::abort_group_level(Where where) noexcept {
  if (group_depth_ == 0) return;
  try {
    std::string lost =
        std::to_string(group_ops_.size()) + " operation(s) were discarded, never issued";
    if (group_abandoned_.empty()) group_abandoned_ = describe_call_site(where);
    if (--group_depth_ > 0) return;  // the enclosing group_end reports it
    discard_group(std::make_exception_ptr(
        AbortedError(call_site_text("group", name(), rank_) + " (group_start at " +
                     describe_call_site(group_where_) +
                     ") was abandoned: an exception left the Group scope at " + group_abandoned_ +
                     "; its " + lost)));
  } catch (...) {  // out of memory for the message: the group is closed all the same
    group_depth_ = 0;
    group_ops_.clear();
    group_work_.reset();
  }
}

std::string EmuCommunicator::unclosed_group() const {
  if (group_depth_ == 0) return {};
  return call_site_text("group_start", name(), rank_, group_where_) +
         " was never closed by group_end: its " + std::to_string(group_ops_.size()) +
         " operation(s) were not issued";
}

Work EmuCommunicator::do_group_end(const CallOptions& opts, Where where) {
  emu::SingleUser::Scope hold(
      user_, "group_end", where, [&] { return call_site_text("group_end", name(), rank_, where); },
      [this](const std::string& text) { refuse_second_thread(text); });
  const int depth = group_depth_;
  try {
    Work work = end_group_level(opts, where);
    if (group_depth_ < depth) user_.leave();  // the level's hold, taken by its group_start
    return work;
  } catch (...) {
    if (group_depth_ < depth) user_.leave();
    throw;
  }
}

Work EmuCommunicator::end_group_level(const CallOptions& opts, Where where) {
  if (group_depth_ == 0) {
    throw InvalidArgument(call_site_text("group_end", name(), rank_, where) +
                          ": no group_start is open");
  }
  if (--group_depth_ > 0) return Work(group_work_);
  if (!group_abandoned_.empty()) {
    std::string text = call_site_text("group_end", name(), rank_, where) +
                       ": the group (group_start at " + describe_call_site(group_where_) +
                       ") was abandoned when an exception left the inner Group scope at " +
                       group_abandoned_ + "; its " + std::to_string(group_ops_.size()) +
                       " operation(s) were discarded, never issued";
    discard_group(std::make_exception_ptr(AbortedError(text)));
    throw InvalidArgument(text);
  }
  try {
    check_group_buffers(group_ops_);
  } catch (...) {
    discard_group(std::current_exception());
    throw;
  }
  auto ops = std::move(group_ops_);
  group_ops_.clear();
  auto work = std::move(group_work_);
  group_work_.reset();
  work->group_ended();
  if (ops.empty()) {  // nothing to run: complete the handle at once, in stream order
    finish_unlaunched(work, nullptr);
    if (!opts.async_op) Work(work).wait();
    return Work(work);
  }
  if (shared_->config.p2p_per_peer_streams &&
      std::any_of(ops.begin(), ops.end(), [](const Issued& i) { return is_p2p(i.op.kind); }))
    return launch_split_group(std::move(ops), opts.async_op, std::move(work));
  return launch(main_, std::move(ops), opts.async_op, std::move(work));
}

}  // namespace twinccl::emu
