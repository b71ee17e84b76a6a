// EmuCommunicator: issue order, groups, collectives through the rendezvous, send/recv through the
// pull exchange, split.
#include "emu/communicator.h"

#include <algorithm>
#include <deque>
#include <cstring>
#include <map>
#include <optional>

#include "twinccl/emu/executor.h"
#include "twinccl/errors.h"
#include "twinccl/reduction.h"

namespace twinccl::emu_backend {

SharedComm::SharedComm(std::shared_ptr<emu::World> w, std::vector<int> ranks, std::string n, EmuConfig c)
    : world(std::move(w)),
      global_ranks(std::move(ranks)),
      name(std::move(n)),
      config(std::move(c)),
      rendezvous(world, global_ranks, name),
      p2p(world, static_cast<int>(global_ranks.size())) {}

EmuCommunicator::EmuCommunicator(std::shared_ptr<SharedComm> shared, int rank)
    : shared_(std::move(shared)), rank_(rank) {}

EmuCommunicator::~EmuCommunicator() = default;

Buffer EmuCommunicator::alloc(std::size_t count, DataType dtype) { return Buffer::host(count, dtype); }

Work EmuCommunicator::submit(OpDesc op) {
  Issued issued{std::move(op), 0};
  if (!is_p2p(issued.op.kind)) issued.seq = next_seq_++;
  if (group_depth_ > 0) {
    group_ops_.push_back(std::move(issued));
    return Work(group_work_);
  }
  bool async_op = issued.op.async_op;
  std::vector<Issued> ops;
  ops.push_back(std::move(issued));
  return launch(std::move(ops), async_op);
}

Work EmuCommunicator::launch(std::vector<Issued> ops, bool async_op, std::shared_ptr<emu::EmuWork> work) {
  if (!work) work = std::make_shared<emu::EmuWork>();
  auto task = [this, ops = std::move(ops)] { run_group(ops); };
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
    group_work_ = std::make_shared<emu::EmuWork>();
  }
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
  return std::string(default_algorithm(op.kind));
}

void EmuCommunicator::run_collective(const OpDesc& op, std::uint64_t seq) {
  emu::Rendezvous& rdv = shared_->rendezvous;
  emu::Meeting& meeting = rdv.arrive(seq, rank_, op);
  try {
    if (op.kind != OpKind::barrier) {
      CollectiveSpec spec = emu::spec_from_meeting(meeting);
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
  } catch (...) {
    rdv.leave(seq, meeting);
    throw;
  }
  rdv.leave(seq, meeting);
}

void EmuCommunicator::run_group(const std::vector<Issued>& ops) {
  emu::Exchange& p2p = shared_->p2p;
  std::deque<emu::Posted> sends;
  std::vector<int> send_to;
  for (const Issued& i : ops) {
    if (i.op.kind != OpKind::send) continue;
    sends.push_back(emu::Posted{i.op.send, i.op.count, rank_, false, false});
    send_to.push_back(i.op.peer);
    p2p.post(rank_, i.op.peer, sends.back());
  }
  try {
    for (const Issued& i : ops) {
      if (!is_p2p(i.op.kind)) run_collective(i.op, i.seq);
    }
    for (const Issued& i : ops) {
      if (i.op.kind != OpKind::recv) continue;
      std::size_t bytes = i.op.count * size_of(i.op.dtype);
      p2p.consume(
          rank_, i.op.peer, i.op.count, [&](const emu::Posted& m) { std::memmove(i.op.recv, m.data, bytes); },
          [&] {
            return "recv on comm '" + name() + "' rank " + std::to_string(rank_) + " (" +
                   describe_call_site(i.op.where) + ") waited for a send from rank " + std::to_string(i.op.peer);
          });
    }
    for (std::size_t k = 0; k < sends.size(); ++k) {
      p2p.wait_consumed(rank_, sends[k], [&] {
        return "send on comm '" + name() + "' rank " + std::to_string(rank_) + " waited for rank " +
               std::to_string(send_to[k]) + " to post the matching recv";
      });
    }
  } catch (...) {
    for (std::size_t k = 0; k < sends.size(); ++k) p2p.withdraw(send_to[k], sends[k]);
    throw;
  }
}

std::unique_ptr<Communicator> EmuCommunicator::split(int color, int key, std::string new_name, Where where) {
  if (group_depth_ > 0) {
    throw InvalidArgument("split on comm '" + name() + "' rank " + std::to_string(rank_) + " (" +
                          describe_call_site(where) + "): not allowed inside a group");
  }
  if (color < 0 && color != kNoColor) {
    throw InvalidArgument("split on comm '" + name() + "' rank " + std::to_string(rank_) + " (" +
                          describe_call_site(where) + "): color=" + std::to_string(color) +
                          " is negative; use kNoColor to opt out");
  }
  OpDesc op;
  op.kind = OpKind::barrier;
  op.where = where;
  std::uint64_t seq = next_seq_++;
  std::shared_ptr<SharedComm> mine;
  int my_rank = -1;
  auto work = std::make_shared<emu::EmuWork>();
  stream_.run_or_enqueue(
      [&] {
        emu::Rendezvous& rdv = shared_->rendezvous;
        emu::Meeting& m = rdv.arrive(seq, rank_, op, "split", {color, key});
        using Groups = std::map<int, std::shared_ptr<SharedComm>>;
        std::shared_ptr<Groups> groups;
        {
          std::lock_guard<std::mutex> lock(m.mu);
          if (!m.shared) {
            auto made = std::make_shared<Groups>();
            std::map<int, std::vector<std::pair<int, int>>> members;  // color -> (key, rank)
            for (int r = 0; r < m.nranks; ++r) {
              auto [c, k] = m.split_args[static_cast<std::size_t>(r)];
              if (c != kNoColor) members[c].push_back({k, r});
            }
            for (auto& [c, list] : members) {
              std::sort(list.begin(), list.end());
              std::vector<int> global;
              for (auto [k, r] : list) global.push_back(shared_->global_ranks[static_cast<std::size_t>(r)]);
              (*made)[c] = std::make_shared<SharedComm>(
                  shared_->world, std::move(global),
                  new_name.empty() ? shared_->name + ".split(" + std::to_string(c) + ")" : new_name, shared_->config);
            }
            m.shared = made;
          }
          groups = std::static_pointer_cast<Groups>(m.shared);
        }
        if (color != kNoColor) {
          mine = groups->at(color);
          for (int i = 0; i < mine->size(); ++i) {
            if (mine->global_ranks[static_cast<std::size_t>(i)] == shared_->global_ranks[static_cast<std::size_t>(rank_)]) my_rank = i;
          }
        }
        rdv.leave(seq, m);
      },
      work);
  Work(work).wait();
  if (!mine) return nullptr;
  return std::make_unique<EmuCommunicator>(mine, my_rank);
}

}  // namespace twinccl::emu_backend
