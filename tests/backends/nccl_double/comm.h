// Communicators, cliques and deferred launches of the NCCL test double (see double.h).
//
// A Clique is what the ranks of one communicator share (found by unique id, or made by a split):
// the collective rendezvous (by sequence number) and the point-to-point mailboxes. A Comm is one
// rank's ncclComm_t. Comms are never freed, so a call after destroy/abort is reported, not a crash.
#pragma once

#include <optional>

#include "nccl_double/double.h"

namespace dbl {

enum class Kind {
  all_reduce,
  reduce_scatter,
  all_gather,
  broadcast,
  reduce,
  all_to_all,
  gather,
  scatter,
  send,
  recv
};
const char* kind_name(Kind k);

struct Op {
  Kind kind{};
  const void* send = nullptr;
  void* recv = nullptr;
  std::size_t count = 0;
  ncclDataType_t type = ncclFloat32;
  int red = 0;          // ncclRedOp_t value (built-in) or premul op index
  double scalar = 1.0;  // premul_sum scalar of this rank
  bool premul = false;
  int root = 0;           // root, or the peer of send/recv
  std::uint64_t seq = 0;  // collectives: per communicator, in call order
  std::vector<Allocation*> uses;
};

struct Comm;

struct Clique {
  int nranks = 0;
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<Comm*> members;  // by rank, null until joined
  int joined = 0;
  struct Slot {
    std::vector<std::optional<Op>> ops;
    int arrived = 0;
    bool done = false;
  };
  std::map<std::uint64_t, Slot> collectives;
  struct Message {
    Op op;
    bool* done;
  };
  std::map<std::pair<int, int>, std::deque<Message>> sends, recvs;  // by (from, to)
  struct SplitSlot {
    std::vector<std::optional<std::pair<int, int>>> color_key;  // by rank
    std::vector<Comm*> children;
    std::shared_ptr<std::atomic<bool>> all_arrived = std::make_shared<std::atomic<bool>>(false);
    int arrived = 0;
    bool done = false;
  };
  std::map<std::uint64_t, SplitSlot> splits;
};

struct Comm {
  std::shared_ptr<Clique> clique;
  int rank = -1;
  int device = 0;
  bool blocking = true;
  std::string name = "?";  // copied from config.commName at init
  const char* name_pointer =
      nullptr;  // what the caller passed: must stay valid while the comm lives
  std::atomic<int> state{ncclSuccess};  // ncclInProgress while init/split/finalize/launch pend
  int polls_left = 0;
  bool ready = false;                           // init/split rendezvous complete
  std::vector<std::function<void()>> on_ready;  // launches held until ncclInProgress resolves
  // A non-blocking ncclCommSplit runs as a job of the PARENT (NCCL init.cc): the parent stays
  // ncclInProgress until every rank arrived, and *newcomm is written only then (on_ready).
  std::shared_ptr<std::atomic<bool>> split_done;
  std::atomic<bool> aborted{false};
  std::atomic<bool> destroyed{false};
  bool finalized = false;
  std::uint64_t next_seq = 0;
  std::uint64_t next_split = 0;
  std::atomic<int> in_flight{0};                   // launched operations not yet finished
  std::vector<std::pair<int, double>> premul_ops;  // index - ncclNumOps -> (type, scalar)
  std::mutex mutex;
};

// "comm 'world' rank 2"
std::string describe(const Comm* c);
// Validates a call's communicator: null, destroyed, aborted or still ncclInProgress is a
// violation. Returns false (and the result to return) when the call must fail.
bool usable(Comm* c, const char* fn, ncclResult_t* result);
void set_last_error(const std::string& text);
// Runs (or, while the comm is ncclInProgress, holds) a launch of `ops` onto `stream`.
void launch(Comm* c, Stream* stream, std::vector<Op> ops, const std::string& what);
// Called by ncclCommGetAsyncError polls: counts down ncclInProgress, then runs held launches.
void poll_progress(Comm* c);
// Runs a launch on its stream thread (nccl_coll.cc): p2p posts, collectives in order, p2p waits.
void execute(Comm* c, const std::vector<Op>& ops);
// Group state of the calling thread: > 0 while ncclGroupStart calls are open.
int group_depth();
// Records `op` for the group end, or launches it now (outside a group). Returns the result.
ncclResult_t issue(Comm* c, cudaStream_t stream, Op op);

}  // namespace dbl
