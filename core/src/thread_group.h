// A group belongs to the thread that opened it: NCCL's ncclGroupStart/End take no communicator,
// so while a thread has a group open, its calls on any other communicator are refused. Kept by
// the Communicator base class (communicator.cc) for every backend, so a program relying on a group
// to cover two communicators fails on the laptop as on GPUs (docs/misuse.md 66).
//
//   if (thread_group_of_other(this)) reject(what, where, thread_group_refusal());
//   thread_group_opened(this, name(), where);   // a group_start succeeded (one level more)
//   thread_group_closed(this);                  // a group_end or group_abort (one level less)
#pragma once

#include <source_location>
#include <string>
#include <string_view>

namespace twinccl {

// Whether this thread has a group open on a communicator other than `comm` (allocates nothing:
// asked before every call), or on `comm` itself.
bool thread_group_of_other(const void* comm) noexcept;
bool thread_group_of(const void* comm) noexcept;
// "this thread has a group open on comm '<name>' (group_start at f.cc:16); NCCL groups belong to
// a thread, so end that group first (group_end) before using another communicator".
std::string thread_group_refusal();
// Where this thread's open group was started (its outermost group_start).
std::source_location thread_group_start() noexcept;
// `comm` (named `name`) opened one more level of this thread's group at `where`; `comm` is
// compared, never used.
void thread_group_opened(const void* comm, std::string_view name,
                         std::source_location where) noexcept;
// One level of `comm`'s group on this thread is closed (nothing when another communicator owns
// it); thread_group_forget closes every level (`comm` is being destroyed).
void thread_group_closed(const void* comm) noexcept;
void thread_group_forget(const void* comm) noexcept;

}  // namespace twinccl
