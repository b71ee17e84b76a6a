// The one thread rule for groups (thread_group.h): this thread's open group, in a thread_local.
#include "thread_group.h"

#include "twinccl/call_site_text.h"

namespace twinccl {
namespace {

struct ThreadGroup {
  const void* owner = nullptr;  // compared, never used (it may be gone)
  int levels = 0;               // group_start calls not yet closed
  std::string owner_name;       // a copy: reused capacity, no allocation once warm
  std::source_location where;
};
thread_local ThreadGroup t_group;

}  // namespace

bool thread_group_of_other(const void* comm) noexcept {
  return t_group.owner != nullptr && t_group.owner != comm;
}

bool thread_group_of(const void* comm) noexcept {
  return t_group.owner != nullptr && t_group.owner == comm;
}

std::string thread_group_refusal() {
  return "this thread has a group open on comm '" + t_group.owner_name + "' (group_start at " +
         describe_call_site(t_group.where) +
         "); NCCL groups belong to a thread, so end that group first (group_end) before using "
         "another communicator";
}

std::source_location thread_group_start() noexcept { return t_group.where; }

void thread_group_opened(const void* comm, std::string_view name,
                         std::source_location where) noexcept {
  if (t_group.owner == comm) {
    ++t_group.levels;
    return;
  }
  t_group.owner = comm;
  t_group.levels = 1;
  t_group.where = where;
  try {
    t_group.owner_name.assign(name);
  } catch (...) {  // out of memory: the message names no communicator
    t_group.owner_name.clear();
  }
}

void thread_group_closed(const void* comm) noexcept {
  if (t_group.owner == comm && --t_group.levels <= 0) t_group.owner = nullptr;
}

void thread_group_forget(const void* comm) noexcept {
  if (t_group.owner == comm) t_group.owner = nullptr;
}

}  // namespace twinccl
