// EmuCommunicator: issue order, collectives through the rendezvous (run_collective.cc), send/recv
// through the pull exchange. Groups are in groups.cc, split() in split.cc; checker helpers (flight
// recorder states, fault hooks, poisoning, Works never waited on) in checks.cc.
#include "communicator.h"

#include <algorithm>
#include <cstring>
#include <deque>
#include <exception>

#include "twinccl/call_site_text.h"
#include "twinccl/errors.h"

namespace twinccl::emu {

SharedComm::SharedComm(std::shared_ptr<emu::World> w, std::vector<int> ranks, std::string n,
                       EmuConfig c)
    : world(std::move(w)),
      global_ranks(std::move(ranks)),
      departures(static_cast<int>(global_ranks.size())),
      name(std::move(n)),
      config(std::move(c)),
      wait_timeouts(static_cast<int>(global_ranks.size())),
      rendezvous(world, global_ranks, name),
      p2p(world, static_cast<int>(global_ranks.size())) {
  p2p.describe(name, global_ranks);
  rendezvous.bound_by(&wait_timeouts);
  p2p.bound_by(&wait_timeouts);
  rendezvous.watch_departures(&departures);
  p2p.watch_departures(&departures);
  if (emu::Checker* checker = world->checker()) {
    record = checker->add_comm(name, global_ranks, config.p2p_per_peer_streams);
    p2p.watch(checker, record);
  }
}

EmuCommunicator::EmuCommunicator(std::shared_ptr<SharedComm> shared, int rank)
    : shared_(std::move(shared)), rank_(rank) {
  emu::Agent* agent = nullptr;
  if (emu::Checker* checker = shared_->world->checker()) {
    agent = checker->add_stream(shared_->record, rank_);
    user_agent_ = checker->user(global_rank());
  }
  failure_ = std::make_shared<emu::CommFailure>(shared_->world, shared_->name, rank_);
  prepare_lane(main_, agent);
}

void EmuCommunicator::rejected(const OpDesc& op, const std::string& message) noexcept {
  (void)op;
  try {
    shared_->world->note_failure(global_rank(), message);
  } catch (...) {  // only the peers' message loses detail
  }
}

Buffer EmuCommunicator::do_alloc(std::size_t count, DataType dtype, std::size_t bytes) {
  try {
    Buffer b = Buffer::host(count, dtype);
    // As on NCCL, where alloc is GPU memory (Memory::refuse_host_view).
    if (shared_->config.check == CheckLevel::debug && b.memory()) b.memory()->refuse_host_view();
    return b;
  } catch (const std::bad_alloc&) {
    throw ResourceError(out_of_memory_text("comm '" + name() + "' rank " + std::to_string(rank_) +
                                               ": alloc(" + std::to_string(count) + ", " +
                                               std::string(twinccl::name(dtype)) + ")",
                                           bytes));
  }
}

Work EmuCommunicator::submit(OpDesc op) {
  refuse_other_ranks_thread(twinccl::name(op.kind), op.where);
  emu::SingleUser::Scope hold(
      user_, twinccl::name(op.kind), op.where,
      [&] { return call_site_text(twinccl::name(op.kind), name(), rank_, op.where); },
      [this](const std::string& text) { refuse_second_thread(text); });
  Issued issued{std::move(op), 0, 0};
  if (!is_p2p(issued.op.kind)) issued.seq = next_seq_++;
  if (emu::FlightRecorder* recorder = shared_->world->recorder()) {
    const OpDesc& o = issued.op;
    emu::OpRecord record{shared_->name, is_p2p(o.kind) ? p2p_issued_ : issued.seq,
                         o.kind,        o.count,
                         o.dtype,       o.peer,
                         o.root,        o.async_op,
                         o.where};
    issued.recorded = recorder->scheduled(global_rank(), record);
  }
  if (is_p2p(issued.op.kind)) ++p2p_issued_;
  if (group_depth_ > 0) {
    group_ops_.push_back(std::move(issued));
    return Work(group_work_);
  }
  Lane& lane = shared_->config.p2p_per_peer_streams && is_p2p(issued.op.kind)
                   ? lane_for(issued.op.peer, issued.op.kind == OpKind::send)
                   : main_;
  bool async_op = issued.op.async_op;
  if (!async_op && run_blocking_inline(lane, std::span<const Issued>(&issued, 1)))
    return Work();  // completed
  std::vector<Issued> ops;
  ops.push_back(std::move(issued));
  return launch(lane, std::move(ops), async_op);
}

std::shared_ptr<emu::EmuWork> EmuCommunicator::new_work(Lane& lane, const OpDesc* first,
                                                        std::uint64_t seq, Where where) {
  emu::WorkTracking t;
  if (lane.agent != nullptr) {
    t.stream = lane.agent;
    t.user = user_agent_;
    t.task = ++lane.tasks_issued;
    t.waited = lane.waited;
    t.checker = shared_->world->checker();
  }
  t.failure = failure_;
  t.op = first != nullptr ? twinccl::name(first->kind) : std::string_view("group");
  t.seq_plus_one = first != nullptr && !is_p2p(first->kind) ? seq + 1 : 0;
  t.where = first != nullptr ? first->where : where;
  return std::make_shared<emu::EmuWork>(std::move(t));
}

void EmuCommunicator::note_async(Lane& lane, const emu::EmuWork& work) {
  const emu::WorkTracking& t = work.tracking();
  if (t.waited == nullptr) return;
  while (!lane.async_issued.empty() && lane.async_issued.front().task <= t.waited->task.load())
    lane.async_issued.pop_front();
  std::string what = std::string(t.op) +
                     (t.seq_plus_one ? " #" + std::to_string(t.seq_plus_one - 1) : std::string()) +
                     " (" + describe_call_site(t.where) + ")";
  lane.async_issued.push_back({t.task, std::move(what)});
}

bool EmuCommunicator::run_blocking_inline(Lane& lane, std::span<const Issued> ops) {
  if (!lane.stream.try_begin_inline()) return false;
  // The bookkeeping a Work would do: the checker sees the task queued on the stream until it
  // completed, and waiting for it counts as waiting for every earlier task.
  std::uint64_t task = 0;
  if (lane.agent != nullptr) {
    task = ++lane.tasks_issued;
    lane.agent->issued.fetch_add(1);
  }
  lane.last_work.reset();  // nothing earlier is pending: the stream was idle
  auto finish = [&] {
    if (lane.agent != nullptr) {
      lane.agent->completed.fetch_add(1);
      lane.waited->note(task);
    }
    lane.stream.end_inline();
  };
  try {
    run_task(lane, ops, false);
  } catch (...) {
    finish();
    throw;
  }
  finish();
  return true;
}

Work EmuCommunicator::launch(Lane& lane, std::vector<Issued> ops, bool async_op,
                             std::shared_ptr<emu::EmuWork> work) {
  if (!work) work = new_work(lane, &ops.front().op, ops.front().seq, ops.front().op.where);
  lane.last_work = work;
  if (lane.agent != nullptr) lane.agent->issued.fetch_add(1);
  OpKind kind = ops.front().op.kind;
  std::uint64_t seq = ops.front().seq;
  Where where = ops.front().op.where;
  int peer = ops.size() == 1 ? ops.front().op.peer : -1;  // a lone send/recv (else unused)
  // The stream holds `work` while the task runs.
  auto task = [this, &lane, ops = std::move(ops), async_op, raw = work.get()] {
    run_task(lane, ops, async_op, raw);
  };
  try {
    if (async_op) {
      lane.stream.enqueue(std::move(task), work);
      note_async(lane, *work);
      return Work(work);
    }
    lane.stream.run_or_enqueue(std::move(task), work);
  } catch (const Error& e) {
    // No worker thread (the system refused one: ResourceError; max_p2p_lane_threads:
    // ConfigError): the Work already failed, nothing was queued. The pairing is kept as for a
    // failed send/recv, and the communicator fails (what is queued on other lanes is cancelled).
    std::string label =
        call_site_text(std::string(twinccl::name(kind)) +
                           (is_p2p(kind) ? std::string() : " #" + std::to_string(seq)),
                       name(), rank_, where);
    std::string text = label + ": " + e.what();
    if (kind == OpKind::send && peer >= 0) shared_->p2p.post_failed(rank_, peer, where, text);
    if (kind == OpKind::recv && peer >= 0) shared_->p2p.refuse(rank_, peer, where, text);
    shared_->world->note_failure(global_rank(), text);
    failure_->fail(label + " failed: " + e.what());
    if (dynamic_cast<const ResourceError*>(&e) != nullptr) throw ResourceError(text);
    throw;
  }
  Work(work).wait();
  return Work(work);
}

std::string EmuCommunicator::algorithm_for(const OpDesc& op) {
  if (!op.algorithm.empty()) return op.algorithm;
  const std::string& forced = shared_->config.algorithm;
  if (!forced.empty() && cache_.serves(op.kind, forced)) return forced;
  if (shared_->config.default_algorithm)
    return shared_->config.default_algorithm(op, shared_->global_ranks);
  return std::string(cache_.default_algorithm(op.kind));
}

void EmuCommunicator::run_task(Lane& lane, std::span<const Issued> ops, bool async_op,
                               emu::EmuWork* work) {
  std::string label;
  auto label_of = [&]() -> const std::string& {
    if (label.empty()) label = ops_label(ops);
    return label;
  };
  bool abandoned = work != nullptr && !work->begin_running();
  if (abandoned || failure_->failed() || shared_->world->aborted()) {
    std::exception_ptr why = failure_->cancellation(label_of());
    if (!why) why = std::make_exception_ptr(AbortedError(label_of() + " was cancelled"));
    cancel(ops, why);
  }
  if (async_op && shared_->config.check == CheckLevel::debug) {
    for (const Issued& i : ops) poison_output(i.op, rank_, size());
  }
  record_states(ops, emu::OpState::started);
  try {
    try {
      run_group(lane, ops);
    } catch (const std::bad_alloc&) {  // a copy, a queue, a message: the run cannot go on
      throw ResourceError(label_of() +
                          ": out of memory (std::bad_alloc) while running it on rank " +
                          std::to_string(rank_) +
                          " (the process's memory or its address-space limit, ulimit -v, is "
                          "exhausted: lower the buffer sizes or the number of ranks)");
    }
  } catch (...) {
    std::string text = current_error_text();
    record_states(ops, emu::OpState::failed);
    shared_->world->note_failure(global_rank(), text);
    failure_->fail(label_of() + " failed: " + text);
    throw;
  }
  record_states(ops, emu::OpState::completed);
}

std::string EmuCommunicator::ops_label(std::span<const Issued> ops) const {
  const OpDesc& op = ops.front().op;
  std::string label =
      failure_->label(twinccl::name(op.kind), is_p2p(op.kind) ? 0 : ops.front().seq + 1, op.where);
  if (ops.size() > 1)
    label = "a group of " + std::to_string(ops.size()) + " operations (" + label + ", ...)";
  return label;
}

void EmuCommunicator::cancel(std::span<const Issued> ops, const std::exception_ptr& why) {
  std::string text;
  try {
    std::rethrow_exception(why);
  } catch (...) {
    text = current_error_text();
  }
  record_states(ops, emu::OpState::failed);
  // Every pairing is kept, as when an operation fails: a send leaves a tombstone, a recv refuses
  // its message; a collective's peers would wait for it at the rendezvous, so the world aborts.
  bool collective = false;
  for (const Issued& i : ops) {
    if (i.op.kind == OpKind::send) {
      shared_->p2p.post_failed(rank_, i.op.peer, i.op.where, text);
    } else if (i.op.kind == OpKind::recv) {
      shared_->p2p.refuse(rank_, i.op.peer, i.op.where, text);
    } else {
      collective = true;
    }
  }
  if (collective) shared_->world->abort(text);
  std::rethrow_exception(why);
}

void EmuCommunicator::check_group_collectives(std::span<const Issued> ops) {
  if (shared_->config.check == CheckLevel::off || ops.size() < 2) return;
  std::vector<const OpDesc*> collectives;
  for (const Issued& i : ops) {
    if (!is_p2p(i.op.kind)) collectives.push_back(&i.op);
  }
  if (collectives.size() < 2) return;
  const Issued& first =
      *std::find_if(ops.begin(), ops.end(), [](const Issued& i) { return !is_p2p(i.op.kind); });
  std::string overlap =
      shared_->group_buffers.post(first.seq, rank_, size(), ops_label(ops), collectives);
  if (overlap.empty()) return;
  shared_->world->abort(overlap);  // the others wait in the group's first collective
  throw InvalidArgument(overlap);
}

void EmuCommunicator::run_group(Lane& lane, std::span<const Issued> ops) {
  check_group_collectives(ops);
  if (std::none_of(ops.begin(), ops.end(), [](const Issued& i) { return is_p2p(i.op.kind); })) {
    for (const Issued& i : ops) run_collective(lane, i.op, i.seq);  // no send/recv bookkeeping
    return;
  }
  emu::Exchange& p2p = shared_->p2p;
  std::vector<const Issued*> send_ops, recv_ops;
  for (const Issued& i : ops) {
    if (i.op.kind == OpKind::send) send_ops.push_back(&i);
    if (i.op.kind == OpKind::recv) recv_ops.push_back(&i);
  }
  std::deque<emu::Posted> sends;
  std::vector<std::uint64_t> send_numbers;
  std::size_t recvs_done = 0;  // recvs that took their message (or failed taking it)
  bool in_recv = false;        // a failing recv refuses its own message (Exchange::consume)
  try {
    if (!send_ops.empty() || !recv_ops.empty()) {
      const OpDesc& first = send_ops.empty() ? recv_ops.front()->op : send_ops.front()->op;
      if (fault(FaultStage::before_p2p, first, 0) == FaultAction::abort_communicator)
        shared_->world->check_abort();
    }
    for (const Issued* i : send_ops) {
      emu::Posted& message = sends.emplace_back();
      message.data = i->op.send;
      message.count = i->op.count;
      message.dtype = i->op.dtype;
      message.where = i->op.where;
      message.part_of = i->op.part_of;
      message.role = i->op.role;
      send_numbers.push_back(p2p.post(rank_, i->op.peer, message));
    }
    for (const Issued& i : ops) {
      if (!is_p2p(i.op.kind)) run_collective(lane, i.op, i.seq);
    }
    for (; recvs_done < recv_ops.size(); ++recvs_done) {
      const OpDesc& op = recv_ops[recvs_done]->op;
      std::size_t bytes = op.count * size_of(op.dtype);
      emu::WaitSite site = wait_site(lane, emu::WaitKind::recv, "recv", op.where, op.peer, 0);
      emu::Expected expected{op.count,   op.dtype, op.where, shared_->name,
                             op.part_of, op.role,  op.recv};
      in_recv = true;
      p2p.consume(
          rank_, op.peer, expected,
          [&](const emu::Posted& m) {
            if (bytes > 0) std::memmove(op.recv, m.data, bytes);  // count 0: pointers may be null
          },
          [&] {
            return call_site_text("recv", name(), rank_, op.where) +
                   " waited for a send from rank " + std::to_string(op.peer);
          },
          &site);
      in_recv = false;
    }
    for (std::size_t k = 0; k < sends.size(); ++k) {
      const OpDesc& op = send_ops[k]->op;
      emu::WaitSite site =
          wait_site(lane, emu::WaitKind::send, "send", op.where, op.peer, send_numbers[k]);
      p2p.wait_consumed(
          rank_, sends[k],
          [&] {
            return call_site_text("send", name(), rank_, op.where) + " waited for rank " +
                   std::to_string(op.peer) + " to post the matching recv";
          },
          &site);
    }
  } catch (...) {
    // Keep every pairing: each send leaves its message or a tombstone, each recv takes its
    // message or refuses it, so the peers learn this rank's cause at once (and nothing they
    // post later pairs with the wrong op).
    std::string cause = current_error_text();
    for (std::size_t k = 0; k < send_ops.size(); ++k) {
      const OpDesc& op = send_ops[k]->op;
      if (k < sends.size()) {
        p2p.fail_posted(op.peer, sends[k], cause);
      } else {
        p2p.post_failed(rank_, op.peer, op.where, cause);
      }
    }
    for (std::size_t k = recvs_done + (in_recv ? 1 : 0); k < recv_ops.size(); ++k) {
      p2p.refuse(rank_, recv_ops[k]->op.peer, recv_ops[k]->op.where, cause);
    }
    throw;
  }
}

}  // namespace twinccl::emu
