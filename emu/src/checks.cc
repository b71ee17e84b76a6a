// The communicator's share of the checks: flight recorder states, fault injection points,
// poisoned outputs of async operations (CheckLevel::debug), Works never waited on, and a group
// still open when the communicator is destroyed.
#include <cstring>
#include <exception>
#include <string>

#include "communicator.h"
#include "twinccl/call_site_text.h"
#include "twinccl/errors.h"

namespace twinccl::emu {

EmuCommunicator::~EmuCommunicator() {
  // Destroyed by stack unwinding (the rank's function threw): the memory of its frames is gone, so
  // nothing still queued may run.
  // A destructor must not throw: the texts below allocate, and the rank may be unwinding from
  // std::bad_alloc itself (a throw here would end the process in std::terminate).
  if (std::uncaught_exceptions() > 0) {
    try {
      failure_->fail("comm '" + name() + "' rank " + std::to_string(rank_) +
                     " was destroyed during stack unwinding (the rank's function threw)");
    } catch (...) {  // no memory for the text: the rank's own exception says why
      failure_->fail(std::string("rank threw"));  // fits std::string's own bytes: no allocation
    }
  }
  // A group still open on this communicator (a split communicator the program drops before its
  // group_end): its operations were never issued. Before, they were dropped without a word (every
  // rank that did the same went on with its outputs unwritten) and the group's Work stayed open
  // forever (test() false, wait() refusing). Now that Work fails with AbortedError and the rank's
  // run with InvalidArgument naming the group_start when its function returns (as for a Work never
  // waited on). A rank unwinding from its own error is not reported again: that error says why
  // (run_world reports the world's open group itself, then unwinds).
  if (group_depth_ > 0) {
    try {
      std::string text = unclosed_group() +
                         " before the communicator was destroyed (a group's operations are issued "
                         "only at group_end: call it before dropping the communicator)";
      group_depth_ = 0;
      discard_group(std::make_exception_ptr(AbortedError(text)));
      if (std::uncaught_exceptions() == 0) shared_->world->report_misuse(global_rank(), text);
    } catch (...) {  // out of memory for the text: the group is dropped all the same
      group_depth_ = 0;
      group_ops_.clear();
      group_work_.reset();
    }
  }
  if (main_.agent == nullptr) return;
  if (std::uncaught_exceptions() == 0) {
    try {
      std::string unwaited = unwaited_message();
      if (!unwaited.empty()) shared_->world->report_misuse(global_rank(), unwaited);
    } catch (...) {  // no memory to describe the misuse: the run's other checks still stand
    }
  }
  // Wait for each stream's last task where the checker sees it (a cycle through a rank that is
  // returning is still a deadlock); the stream members' destructors then drain and join.
  auto wait_last = [](Lane& lane) {
    if (auto last = lane.last_work.lock()) {
      try {
        last->wait();
      } catch (...) {  // its error belongs to whoever holds the Work (or to nobody)
      }
    }
  };
  wait_last(main_);
  for (auto& [key, lane] : lanes_) wait_last(*lane);
}

std::string EmuCommunicator::unwaited_message() const {
  auto unwaited = [&](const Lane& lane) -> std::string {
    std::uint64_t through = lane.waited ? lane.waited->task.load() : 0;
    for (const AsyncIssued& a : lane.async_issued) {
      if (a.task > through) {
        return "comm '" + name() + "' rank " + std::to_string(rank_) + ": " + a.what +
               " was issued with async_op and its Work was never waited on (wait(), test() "
               "returning true, or a later operation on this communicator that was waited on) "
               "before the communicator was destroyed (the world's when the rank's function "
               "returned; a split communicator's when its owner dropped it)";
      }
    }
    return "";
  };
  std::string text = unwaited(main_);
  for (auto it = lanes_.begin(); text.empty() && it != lanes_.end(); ++it)
    text = unwaited(*it->second);
  return text;
}

void EmuCommunicator::record_states(std::span<const Issued> ops, emu::OpState state) {
  emu::FlightRecorder* recorder = shared_->world->recorder();
  if (recorder == nullptr) return;
  for (const Issued& i : ops) {
    if (i.recorded != 0) recorder->set_state(global_rank(), i.recorded, state);
  }
}

FaultAction EmuCommunicator::fault(FaultStage stage, const OpDesc& op, std::uint64_t seq) {
  const FaultHook& hook = shared_->config.fault_hook;
  if (!hook) return FaultAction::proceed;
  FaultPoint point{global_rank(), shared_->name, seq, op.kind, stage};
  FaultAction action = hook(point);
  if (action == FaultAction::abort_communicator) {
    shared_->world->abort(
        "comm '" + name() + "' was aborted by rank " + std::to_string(rank_) + " (" +
        describe_call_site(op.where) + ") in " + std::string(twinccl::name(op.kind)) +
        (is_p2p(op.kind) ? std::string() : " #" + std::to_string(seq)) + " (fault injection)");
  }
  return action;
}

void EmuCommunicator::check_group_buffers(const std::vector<Issued>& ops) const {
  if (shared_->config.check != CheckLevel::debug) return;
  for (const Issued& r : ops) {
    if (r.op.kind != OpKind::recv || r.op.count == 0) continue;
    auto rb = reinterpret_cast<std::uintptr_t>(r.op.recv);
    std::size_t rn = r.op.count * size_of(r.op.dtype);
    for (const Issued& s : ops) {
      if (s.op.kind != OpKind::send || s.op.count == 0) continue;
      auto sb = reinterpret_cast<std::uintptr_t>(s.op.send);
      std::size_t sn = s.op.count * size_of(s.op.dtype);
      if (rb < sb + sn && sb < rb + rn) {
        throw InvalidArgument(call_site_text("group", name(), rank_) + ": the recv from rank " +
                              std::to_string(r.op.peer) + " (" + describe_call_site(r.op.where) +
                              ") writes into the buffer the send to rank " +
                              std::to_string(s.op.peer) + " (" + describe_call_site(s.op.where) +
                              ") reads, while both are in flight");
      }
    }
  }
}

void poison_output(const OpDesc& op, int rank, int nranks) {
  if (op.recv == nullptr || is_in_place(op, rank)) return;
  std::size_t bytes = recv_elements(op, rank, nranks) * size_of(op.dtype);
  if (bytes == 0) return;
  std::size_t send_bytes =
      op.send == nullptr ? 0 : send_elements(op, rank, nranks) * size_of(op.dtype);
  auto r = reinterpret_cast<std::uintptr_t>(op.recv);
  auto s = reinterpret_cast<std::uintptr_t>(op.send);
  if (send_bytes > 0 && s < r + bytes && r < s + send_bytes) return;  // never destroy an input
  std::memset(op.recv, 0xFF, bytes);
}

}  // namespace twinccl::emu
