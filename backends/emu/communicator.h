// The emulator's Communicator: one per rank thread; ranks of one communicator share a SharedComm
// (rendezvous for collectives, a pull exchange for send/recv). Calls run on the rank's Stream.
//
//   auto shared = std::make_shared<emu_backend::SharedComm>(world, ranks, "world", config);
//   emu_backend::EmuCommunicator comm(shared, rank);
//   comm.all_reduce(...);
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "twinccl/algorithms.h"
#include "twinccl/communicator.h"
#include "twinccl/emu/exchange.h"
#include "twinccl/emu/rendezvous.h"
#include "twinccl/emu/stream.h"
#include "twinccl/emu/world.h"
#include "twinccl/run.h"

namespace twinccl::emu_backend {

struct EmuConfig {
  std::string algorithm;       // forced for every collective that has it (TWINCCL_ALGO)
  bool schedule_path = false;  // never take the direct fast path
  AlgorithmParams params;
};

struct SharedComm {
  SharedComm(std::shared_ptr<emu::World> world, std::vector<int> global_ranks, std::string name, EmuConfig config);
  std::shared_ptr<emu::World> world;
  std::vector<int> global_ranks;  // world rank of each rank of this communicator
  std::string name;
  EmuConfig config;
  emu::Rendezvous rendezvous;
  emu::Exchange p2p;  // user send/recv
  int size() const { return static_cast<int>(global_ranks.size()); }
};

class EmuCommunicator final : public Communicator {
 public:
  EmuCommunicator(std::shared_ptr<SharedComm> shared, int rank);
  ~EmuCommunicator() override;

  int rank() const override { return rank_; }
  int size() const override { return shared_->size(); }
  const std::string& name() const override { return shared_->name; }
  std::string_view backend() const override { return "emu"; }
  Buffer alloc(std::size_t count, DataType dtype) override;

  void group_start(Where where) override;
  Work group_end(CallOptions opts, Where where) override;
  std::unique_ptr<Communicator> split(int color, int key, std::string name, Where where) override;

 protected:
  Work submit(OpDesc op) override;

 private:
  struct Issued {
    OpDesc op;
    std::uint64_t seq = 0;  // collectives only
  };
  Work launch(std::vector<Issued> ops, bool async_op, std::shared_ptr<emu::EmuWork> work = nullptr);
  void run_group(const std::vector<Issued>& ops);
  void run_collective(const OpDesc& op, std::uint64_t seq);
  std::string algorithm_for(const OpDesc& op) const;

  std::shared_ptr<SharedComm> shared_;
  int rank_;
  std::uint64_t next_seq_ = 0;
  int group_depth_ = 0;
  Where group_where_;
  std::vector<Issued> group_ops_;
  std::shared_ptr<emu::EmuWork> group_work_;
  emu::Stream stream_;  // last member: destroyed (drained and joined) first
};

// Runs fn on options.world_size threads, one EmuCommunicator each.
void run_emulated(const RunOptions& options, const RankFunction& fn);

}  // namespace twinccl::emu_backend
