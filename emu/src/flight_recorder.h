// FlightRecorder: the last N operations of every rank with their state, for error messages
// ("where every rank stands") and as a JSON dump on error or on request.
//
//   FlightRecorder rec(8, 64);
//   auto id = rec.scheduled(rank, {.comm = "world", .seq = 3, .kind = OpKind::all_reduce, ...});
//   rec.set_state(rank, id, OpState::started);   ...   rec.set_state(rank, id, OpState::completed);
//   std::string json = rec.json();
//
// Each rank has its own ring of preallocated entries behind its own mutex (only the rank's own
// threads touch it), so recording costs a few uncontended locks and no allocation once warm.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

#include "twinccl/data_type.h"
#include "twinccl/operation.h"

namespace twinccl::emu {

enum class OpState : std::uint8_t { scheduled, started, completed, failed };
std::string_view state_name(OpState state);

struct OpRecord {
  std::string_view comm;  // copied into the recorder
  std::uint64_t seq = 0;  // collective sequence number; p2p ops: the rank's p2p count
  OpKind kind = OpKind::barrier;
  std::size_t count = 0;
  DataType dtype = DataType::float32;
  int peer = -1;  // send/recv (rank in the communicator)
  int root = -1;  // rooted collectives
  bool async_op = false;
  std::source_location where;
};

class FlightRecorder {
 public:
  FlightRecorder(int ranks, std::size_t ops_per_rank);

  // Returns an id for set_state. Overwrites the rank's oldest entry when full.
  std::uint64_t scheduled(int rank, const OpRecord& op);
  // Ignored when the entry was already overwritten.
  void set_state(int rank, std::uint64_t id, OpState state);

  // {"ops_per_rank": N, "ranks": [{"rank": 0, "operations": [{"id", "comm", "seq", "op", "count",
  //  "dtype", "peer", "root", "async", "where", "state"}, ...oldest first]}, ...]}
  std::string json() const;
  // "all_reduce #3 on comm 'world' (a.cc:10), completed" for the rank's latest entry, or "".
  std::string latest(int rank) const;

 private:
  struct Entry {
    std::uint64_t id = 0;
    std::string comm;
    OpRecord op;
    OpState state = OpState::scheduled;
  };
  struct Ring {
    mutable std::mutex mu;
    std::vector<Entry> entries;
    std::uint64_t next_id = 0;
  };
  static std::string describe(const Entry& e);
  std::size_t capacity_;
  std::vector<std::unique_ptr<Ring>> rings_;
};

}  // namespace twinccl::emu
