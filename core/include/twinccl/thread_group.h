// A group belongs to the thread that opened it: NCCL's ncclGroupStart/End take no communicator,
// so while a thread has a group open, its calls on any other communicator are refused. One rule
// and one message for both backends (the emulator enforces it too, so a program relying on a
// group to cover two communicators fails on the laptop as on GPUs; docs/misuse.md 66).
//
//   if (thread_group_of_other(this)) throw InvalidArgument(thread_group_refusal(what));
//   thread_group_opened(this, name(), where);   // its outermost group_start
//   thread_group_closed(this);                  // its outermost group_end, or it is destroyed
#pragma once

#include <source_location>
#include <string>
#include <string_view>

namespace twinccl {

// Whether this thread has a group open on a communicator other than `comm` (allocates nothing:
// asked before every call).
bool thread_group_of_other(const void* comm) noexcept;
// "<what>: this thread has a group open on comm '<name>' (group_start at f.cc:16); NCCL groups
// belong to a thread, so end that group first (group_end) before using another communicator".
std::string thread_group_refusal(const std::string& what);
// `comm` (named `name`) opened this thread's group at `where`; `comm` is compared, never used.
void thread_group_opened(const void* comm, std::string_view name,
                         std::source_location where) noexcept;
// `comm`'s group on this thread is closed (nothing when another communicator owns it).
void thread_group_closed(const void* comm) noexcept;

}  // namespace twinccl
