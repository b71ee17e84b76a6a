// One thread at a time per communicator (NCCL's thread-safety rule: "it is not allowed to issue
// NCCL operations to a single communicator in parallel with multiple threads"; the operations of
// one group are issued by one thread). A call holds its communicator while it runs (a blocking
// call until it completed); an open group holds it from group_start to the outermost group_end.
// A call from a second thread meanwhile is refused: the two calls' order, which every rank must
// share, would be left to chance (silent wrong data when counts agree).
//
//   emu::SingleUser::Scope hold(user_, "all_reduce", where, label_fn, abort_fn);  // or throws
//
// Calls that follow each other from different threads (a thread pool, one at a time) are legal.
#pragma once

#include <mutex>
#include <source_location>
#include <string>
#include <string_view>
#include <thread>

#include "twinccl/errors.h"

namespace twinccl::emu {

class SingleUser {
 public:
  // Holds the communicator for the calling thread (re-entrant: a call inside a call of the same
  // thread, an operation inside its open group); false when another thread holds it, with what
  // that thread is in.
  bool try_enter(std::string_view op, std::source_location where, std::string_view* other_op,
                 std::source_location* other_where);
  void leave() noexcept;
  // The refusal's text after `label` ("all_reduce on comm 'world' rank 0 (f.cc:9)").
  static std::string refusal(const std::string& label, std::string_view other_op,
                             std::source_location other_where);

  // Holds the communicator for one call. When another thread holds it: refused(text) (the caller
  // aborts the run with it), then throws InvalidArgument(text); label() builds the call's name
  // only then.
  class Scope {
   public:
    template <class LabelFn, class RefusedFn>
    Scope(SingleUser& user, std::string_view op, std::source_location where, LabelFn&& label,
          RefusedFn&& refused)
        : user_(user) {
      std::string_view other_op;
      std::source_location other_where;
      if (user.try_enter(op, where, &other_op, &other_where)) return;
      std::string text = refusal(label(), other_op, other_where);
      refused(text);
      throw InvalidArgument(text);
    }
    ~Scope() { user_.leave(); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    SingleUser& user_;
  };

 private:
  std::mutex mu_;
  std::thread::id owner_;
  int depth_ = 0;
  std::string_view owner_op_;  // a static name: twinccl::name(OpKind) or a literal
  std::source_location owner_where_;
};

}  // namespace twinccl::emu
