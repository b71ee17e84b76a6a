// EmuCommunicator: issue order, groups, collectives through the rendezvous, send/recv through the
// pull exchange. split() is in split.cc; checker helpers (flight recorder states, fault hooks,
// poisoning, Works never waited on) in checks.cc.
#include "emu/communicator.h"
#include "emu/default_choice.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <exception>
#include <optional>

#include "twinccl/emu/executor.h"
#include "twinccl/errors.h"
#include "twinccl/reduction.h"

namespace twinccl::emu_backend {
namespace {

std::string current_error_text() {
  try {
    throw;
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "a non-standard exception";
  }
}

}  // namespace

SharedComm::SharedComm(std::shared_ptr<emu::World> w, std::vector<int> ranks, std::string n, EmuConfig c)
    : world(std::move(w)),
      global_ranks(std::move(ranks)),
      name(std::move(n)),
      config(std::move(c)),
      rendezvous(world, global_ranks, name),
      p2p(world, static_cast<int>(global_ranks.size())) {
  if (emu::Checker* checker = world->checker()) {
    record = checker->add_comm(name, global_ranks);
    p2p.watch(checker, record);
  }
}

EmuCommunicator::EmuCommunicator(std::shared_ptr<SharedComm> shared, int rank)
    : shared_(std::move(shared)), rank_(rank) {
  if (emu::Checker* checker = shared_->world->checker()) {
    stream_agent_ = checker->add_stream(shared_->record, rank_);
    user_agent_ = checker->user(global_rank());
    waited_ = std::make_shared<emu::WaitedThrough>();
  }
}

Buffer EmuCommunicator::alloc(std::size_t count, DataType dtype) { return Buffer::host(count, dtype); }

Work EmuCommunicator::submit(OpDesc op) {
  Issued issued{std::move(op), 0, 0};
  if (!is_p2p(issued.op.kind)) issued.seq = next_seq_++;
  if (emu::FlightRecorder* recorder = shared_->world->recorder()) {
    const OpDesc& o = issued.op;
    emu::OpRecord record{shared_->name, is_p2p(o.kind) ? p2p_issued_ : issued.seq, o.kind, o.count, o.dtype,
                         o.peer, o.root, o.async_op, o.where};
    issued.recorded = recorder->scheduled(global_rank(), record);
  }
  if (is_p2p(issued.op.kind)) ++p2p_issued_;
  if (group_depth_ > 0) {
    group_ops_.push_back(std::move(issued));
    return Work(group_work_);
  }
  bool async_op = issued.op.async_op;
  std::vector<Issued> ops;
  ops.push_back(std::move(issued));
  return launch(std::move(ops), async_op);
}

std::shared_ptr<emu::EmuWork> EmuCommunicator::new_work(const OpDesc* first, std::uint64_t seq, Where where) {
  if (stream_agent_ == nullptr) return std::make_shared<emu::EmuWork>();
  emu::WorkTracking t;
  t.stream = stream_agent_;
  t.user = user_agent_;
  t.task = ++tasks_issued_;
  t.waited = waited_;
  t.checker = shared_->world->checker();
  t.op = first != nullptr ? twinccl::name(first->kind) : std::string_view("group");
  t.seq_plus_one = first != nullptr && !is_p2p(first->kind) ? seq + 1 : 0;
  t.where = first != nullptr ? first->where : where;
  return std::make_shared<emu::EmuWork>(std::move(t));
}

void EmuCommunicator::note_async(const emu::EmuWork& work) {
  const emu::WorkTracking& t = work.tracking();
  if (t.waited == nullptr) return;
  while (!async_issued_.empty() && async_issued_.front().task <= t.waited->task.load()) async_issued_.pop_front();
  std::string what = std::string(t.op) + (t.seq_plus_one ? " #" + std::to_string(t.seq_plus_one - 1) : std::string()) +
                     " (" + describe_call_site(t.where) + ")";
  async_issued_.push_back({t.task, std::move(what)});
}

Work EmuCommunicator::launch(std::vector<Issued> ops, bool async_op, std::shared_ptr<emu::EmuWork> work) {
  if (!work) work = new_work(&ops.front().op, ops.front().seq, ops.front().op.where);
  if (async_op) note_async(*work);
  last_work_ = work;
  if (stream_agent_ != nullptr) stream_agent_->issued.fetch_add(1);
  auto task = [this, ops = std::move(ops), async_op] { run_task(ops, async_op); };
  if (async_op) {
    stream_.enqueue(std::move(task), work);
    return Work(work);
  }
  stream_.run_or_enqueue(std::move(task), work);
  Work(work).wait();
  return Work(work);
}

void EmuCommunicator::group_start(Where where) {
  if (group_depth_++ == 0) {
    group_where_ = where;
    group_work_ = new_work(nullptr, 0, where);  // every call inside the group returns this Work
  }
}

std::string EmuCommunicator::unclosed_group() const {
  if (group_depth_ == 0) return {};
  return "group_start on comm '" + name() + "' rank " + std::to_string(rank_) + " (" +
         describe_call_site(group_where_) + ") was never closed by group_end: its " +
         std::to_string(group_ops_.size()) + " operation(s) were not issued";
}

Work EmuCommunicator::group_end(CallOptions opts, Where where) {
  if (group_depth_ == 0) {
    throw InvalidArgument("group_end on comm '" + name() + "' rank " + std::to_string(rank_) + " (" +
                          describe_call_site(where) + "): no group_start is open");
  }
  if (--group_depth_ > 0) return Work(group_work_);
  auto ops = std::move(group_ops_);
  group_ops_.clear();
  auto work = std::move(group_work_);
  check_group_buffers(ops);
  if (ops.empty()) {  // nothing to run: complete the handle at once, in stream order
    ops.shrink_to_fit();
    if (stream_agent_ != nullptr) stream_agent_->issued.fetch_add(1);
    stream_.run_or_enqueue([] {}, work);
    if (!opts.async_op) Work(work).wait();
    return Work(work);
  }
  return launch(std::move(ops), opts.async_op, std::move(work));
}

std::string EmuCommunicator::algorithm_for(const OpDesc& op) const {
  if (!op.algorithm.empty()) return op.algorithm;
  const std::string& forced = shared_->config.algorithm;
  if (!forced.empty()) {
    for (const Algorithm* a : algorithms_for(op.kind)) {
      if (a->name() == forced) return forced;
    }
  }
  return default_algorithm_for(shared_->config, shared_->global_ranks, op);
}

void EmuCommunicator::run_task(const std::vector<Issued>& ops, bool async_op) {
  if (async_op && shared_->config.check == CheckLevel::debug) {
    for (const Issued& i : ops) poison_output(i.op, rank_, size());
  }
  record_states(ops, emu::OpState::started);
  try {
    run_group(ops);
  } catch (...) {
    record_states(ops, emu::OpState::failed);
    throw;
  }
  record_states(ops, emu::OpState::completed);
}

void EmuCommunicator::run_collective(const OpDesc& op, std::uint64_t seq) {
  if (fault(FaultStage::before_collective, op, seq) == FaultAction::abort_communicator) shared_->world->check_abort();
  emu::Rendezvous& rdv = shared_->rendezvous;
  emu::WaitSite site;
  site.agent = stream_agent_;
  site.kind = emu::WaitKind::collective;
  site.rank = rank_;
  site.seq = seq;
  site.op = twinccl::name(op.kind);
  site.where = op.where;
  site.on_user_thread = stream_.running_inline();
  emu::Meeting& meeting = rdv.arrive(seq, rank_, op, {}, {}, &site);
  try {
    CollectiveSpec spec = emu::spec_from_meeting(meeting);  // the fingerprint: every rank checks it
    fault(FaultStage::in_collective, op, seq);
    if (op.kind != OpKind::barrier) {
      std::optional<Reduction> reduction;
      if (is_reducing(op.kind)) {
        std::vector<ReduceOp> ops;
        ops.reserve(meeting.ops.size());
        for (const OpDesc& o : meeting.ops) ops.push_back(o.op);
        reduction = Reduction::make(op.dtype, ops);
      }
      emu::RankContext ctx{meeting, rank_, reduction ? &*reduction : nullptr, op.dtype};
      std::string algorithm = algorithm_for(op);
      const EmuConfig& config = shared_->config;
      bool default_params = config.params.channels == 1 && config.params.chunk_elements == 0;
      if (!config.schedule_path && default_params && emu::fast_path_supports(op.kind) &&
          algorithm == default_algorithm(op.kind)) {
        emu::run_fast_path(ctx);
      } else {
        RankSchedule schedule = build_rank_schedule(spec, algorithm, config.params, rank_);
        emu::execute_schedule(ctx, schedule, op.send, op.recv);
      }
    }
  } catch (const AbortedError&) {
    meeting.wait_until_nobody_reads(rank_);
    rdv.leave(seq, meeting);
    throw;
  } catch (const MismatchError&) {  // every rank of the meeting throws the same one
    meeting.wait_until_nobody_reads(rank_);
    rdv.leave(seq, meeting);
    throw;
  } catch (...) {
    // The others may be reading this rank's buffers: stop them, and unwind only once they are done.
    shared_->world->abort(meeting.label + ": rank " + std::to_string(rank_) + " failed: " + current_error_text());
    meeting.wait_until_nobody_reads(rank_);
    rdv.leave(seq, meeting);
    throw;
  }
  rdv.leave(seq, meeting);
}

void EmuCommunicator::run_group(const std::vector<Issued>& ops) {
  emu::Exchange& p2p = shared_->p2p;
  bool has_p2p = std::any_of(ops.begin(), ops.end(), [](const Issued& i) { return is_p2p(i.op.kind); });
  if (has_p2p) {
    const Issued& first = *std::find_if(ops.begin(), ops.end(), [](const Issued& i) { return is_p2p(i.op.kind); });
    if (fault(FaultStage::before_p2p, first.op, 0) == FaultAction::abort_communicator) shared_->world->check_abort();
  }
  std::deque<emu::Posted> sends;
  std::vector<const Issued*> send_ops;
  std::vector<std::uint64_t> send_numbers;
  for (const Issued& i : ops) {
    if (i.op.kind != OpKind::send) continue;
    emu::Posted& message = sends.emplace_back();
    message.data = i.op.send;
    message.count = i.op.count;
    message.dtype = i.op.dtype;
    message.where = i.op.where;
    send_ops.push_back(&i);
    send_numbers.push_back(p2p.post(rank_, i.op.peer, message));
  }
  bool inline_run = stream_.running_inline();
  try {
    for (const Issued& i : ops) {
      if (!is_p2p(i.op.kind)) run_collective(i.op, i.seq);
    }
    for (const Issued& i : ops) {
      if (i.op.kind != OpKind::recv) continue;
      std::size_t bytes = i.op.count * size_of(i.op.dtype);
      emu::WaitSite site;
      site.agent = stream_agent_;
      site.kind = emu::WaitKind::recv;
      site.rank = rank_;
      site.peer = i.op.peer;
      site.op = "recv";
      site.where = i.op.where;
      site.on_user_thread = inline_run;
      emu::Expected expected{i.op.count, i.op.dtype, i.op.where, shared_->name};
      p2p.consume(
          rank_, i.op.peer, expected, [&](const emu::Posted& m) { std::memmove(i.op.recv, m.data, bytes); },
          [&] {
            return "recv on comm '" + name() + "' rank " + std::to_string(rank_) + " (" +
                   describe_call_site(i.op.where) + ") waited for a send from rank " + std::to_string(i.op.peer);
          },
          &site);
    }
    for (std::size_t k = 0; k < sends.size(); ++k) {
      const OpDesc& op = send_ops[k]->op;
      emu::WaitSite site;
      site.agent = stream_agent_;
      site.kind = emu::WaitKind::send;
      site.rank = rank_;
      site.peer = op.peer;
      site.seq = send_numbers[k];
      site.op = "send";
      site.where = op.where;
      site.on_user_thread = inline_run;
      p2p.wait_consumed(
          rank_, sends[k],
          [&] {
            return "send on comm '" + name() + "' rank " + std::to_string(rank_) + " (" +
                   describe_call_site(op.where) + ") waited for rank " + std::to_string(op.peer) +
                   " to post the matching recv";
          },
          &site);
    }
  } catch (...) {
    for (std::size_t k = 0; k < sends.size(); ++k) p2p.withdraw(send_ops[k]->op.peer, sends[k]);
    throw;
  }
}

}  // namespace twinccl::emu_backend
