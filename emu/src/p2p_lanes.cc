// EmulatorOptions::p2p_per_peer_streams: send/recv on one stream per (peer, direction), as
// torch's ProcessGroupNCCL runs point-to-point on a communicator and stream per pair of ranks, so
// independent transfers progress independently.
//
// How it works: rank 0 of a 3-rank ring issues irecv(from 2) then isend(to 1). On one stream the
// recv waits for rank 2's send, which waits behind rank 2's own recv: a cycle. With lanes the
// recv runs on lane (2, recv) and the send on lane (1, send), so every send is posted at once:
//
//   rank 0: lane(2,recv) [recv #1] | lane(1,send) [send #1]      collectives: the main stream
//
// The exchange keeps messages of one (sender, receiver) pair in FIFO order and one lane runs its
// tasks in issue order, so messages of a pair match in order. A blocking send/recv runs on its
// lane too (inline on the caller's thread when the lane is idle): a blocking send still waits for
// its recv. A group's send/recv are issued one per lane, its collectives as one task on the
// communicator's stream, and the group's Work is done when every part is. The checker sees each
// lane as a node: a recv waits for the peer's send lane when it has queued work, else for the
// peer's own thread (which must still issue the send).
#include "communicator.h"

namespace twinccl::emu {

void EmuCommunicator::prepare_lane(Lane& lane, emu::Agent* agent, std::string per_peer) {
  lane.agent = agent;
  if (agent != nullptr) lane.waited = std::make_shared<emu::WaitedThrough>();
  const FaultHook& hook = shared_->config.fault_hook;
  if (!hook && per_peer.empty()) return;
  emu::World* world = per_peer.empty() ? nullptr : shared_->world.get();
  int max = shared_->config.max_p2p_lane_threads;
  lane.stream.before_thread_start(
      [hook, rank = global_rank(), comm = shared_->name, world, max, who = std::move(per_peer)] {
        if (hook) {
          FaultPoint point;
          point.rank = rank;
          point.comm = comm;
          point.stage = FaultStage::thread_start;
          hook(point);
        }
        if (world != nullptr) world->acquire_lane_thread(max, who);
      });
  if (world == nullptr) return;
  // Lanes are many (two per peer) and mostly idle: their workers end when idle, so the threads
  // alive are those with send/recv in flight (bounded by EmulatorOptions::max_p2p_lane_threads).
  lane.stream.end_worker_when_idle(emu::World::kLaneIdle);
  lane.stream.after_thread_end([world] { world->release_lane_thread(); });
}

EmuCommunicator::Lane& EmuCommunicator::lane_for(int peer, bool sends) {
  int key = peer * 2 + (sends ? 1 : 0);
  auto it = lanes_.find(key);
  if (it != lanes_.end()) return *it->second;
  auto lane = std::make_unique<Lane>();
  emu::Agent* agent = nullptr;
  if (emu::Checker* checker = shared_->world->checker())
    agent = checker->add_lane(shared_->record, rank_, peer, sends);
  prepare_lane(*lane, agent,
               "comm '" + name() + "' rank " + std::to_string(rank_) + "'s lane of " +
                   (sends ? "sends to rank " : "recvs from rank ") + std::to_string(peer));
  return *lanes_.emplace(key, std::move(lane)).first->second;
}

Work EmuCommunicator::launch_split_group(std::vector<Issued> ops, bool async_op,
                                         std::shared_ptr<emu::EmuWork> work) {
  std::vector<Issued> collectives;
  std::vector<std::shared_ptr<emu::EmuWork>> parts;
  for (Issued& i : ops) {
    if (!is_p2p(i.op.kind)) {
      collectives.push_back(std::move(i));
      continue;
    }
    Lane& lane = lane_for(i.op.peer, i.op.kind == OpKind::send);
    std::vector<Issued> one;
    one.push_back(std::move(i));
    // Queued, never inline: the group's other parts must be issued before this one blocks.
    Work part = launch(lane, std::move(one), true);
    parts.push_back(std::static_pointer_cast<emu::EmuWork>(part.state()));
  }
  bool own_task = !collectives.empty();
  work->add_parts(std::move(parts), own_task);
  if (own_task) launch(main_, std::move(collectives), true, work);
  if (!async_op) Work(work).wait();
  return Work(work);
}

}  // namespace twinccl::emu
