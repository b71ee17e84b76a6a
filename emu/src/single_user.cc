// SingleUser: see single_user.h.
#include "single_user.h"

#include "twinccl/call_site_text.h"

namespace twinccl::emu {

bool SingleUser::try_enter(std::string_view op, std::source_location where,
                           std::string_view* other_op, std::source_location* other_where) {
  std::lock_guard<std::mutex> lock(mu_);
  if (depth_ > 0 && owner_ != std::this_thread::get_id()) {
    *other_op = owner_op_;
    *other_where = owner_where_;
    return false;
  }
  if (depth_++ == 0) {
    owner_ = std::this_thread::get_id();
    owner_op_ = op;
    owner_where_ = where;
  }
  return true;
}

void SingleUser::leave() noexcept {
  std::lock_guard<std::mutex> lock(mu_);
  if (depth_ > 0) --depth_;
}

std::string SingleUser::refusal(const std::string& label, std::string_view other_op,
                                std::source_location other_where) {
  std::string inside = other_op == "group_start"
                           ? "has a group open on this communicator (group_start at " +
                                 describe_call_site(other_where) + ")"
                           : "is inside " + std::string(other_op) + " (" +
                                 describe_call_site(other_where) + ") on this communicator";
  return label + ": called from one thread while another thread " + inside +
         "; a communicator takes calls from one thread at a time (NCCL: operations must not be "
         "issued to one communicator by several threads at once, and a group's operations by one "
         "thread), or the order of the calls, which every rank must share, is left to chance. "
         "Make the calls from one thread, or give each thread its own communicator (split)";
}

}  // namespace twinccl::emu
