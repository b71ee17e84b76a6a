// NCCL communicator lifecycle and groups in the test double (see comm.h).
//
// How it works: init and split are rendezvous on the clique's mutex; the last rank to arrive
// makes everyone ready. A non-blocking communicator (config.blocking = 0) answers ncclInProgress
// from init/split/finalize/collectives and then `in_progress_polls` more times from
// ncclCommGetAsyncError; the launches of a collective are held until then, so a caller that
// records its completion event before polling sees wrong data (and a violation).
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "nccl_double/comm.h"

namespace dbl {
namespace {

thread_local std::string t_last_error;
thread_local int t_group_depth = 0;
struct Pending {
  Comm* comm;
  Stream* stream;
  Op op;
};
thread_local std::vector<Pending> t_pending;

std::mutex g_ids_mutex;
std::map<std::string, std::shared_ptr<Clique>> g_cliques;  // by unique id bytes
std::atomic<long> g_next_id{1};

int polls() { return static_cast<int>(setting("in_progress_polls", 2)); }

// Everyone in the clique joined: each becomes usable (after its polls, when non-blocking).
void make_ready(Comm* c) {
  std::lock_guard lock(c->mutex);
  c->ready = true;
  if (c->name_pointer != nullptr &&
      std::strncmp(c->name_pointer, c->name.c_str(), c->name.size() + 1) != 0) {
    violation(describe(c) + ": config.commName no longer holds the name given at the call ('" +
              c->name + "'): the pointer must stay valid until the communicator is ready");
  }
  if (c->blocking) c->state = ncclSuccess;
}

bool wait_ready(Comm* c) {
  const auto deadline = Clock::now() + kHostWait;
  for (;;) {
    {
      std::lock_guard lock(c->mutex);
      if (c->ready) return true;
    }
    if (!pause_until(deadline)) return false;
  }
}

Comm* new_comm(const ncclConfig_t* config) {
  auto* c = new Comm;
  c->device = current_device();
  c->blocking = config == nullptr || config->blocking == INT_MIN || config->blocking != 0;
  if (config != nullptr && config->commName != nullptr) {
    c->name = config->commName;
    c->name_pointer = config->commName;
  }
  if (!c->blocking) {
    c->state = ncclInProgress;
    c->polls_left = polls();
  }
  return c;
}

}  // namespace

std::string describe(const Comm* c) {
  return "comm '" + c->name + "' rank " + std::to_string(c->rank);
}

void set_last_error(const std::string& text) { t_last_error = text; }

bool usable(Comm* c, const char* fn, ncclResult_t* result) {
  *result = ncclInvalidUsage;
  if (c == nullptr) {
    violation(thread_tag() + ": " + fn + " on a null communicator");
    *result = ncclInvalidArgument;
    return false;
  }
  if (c->destroyed || c->aborted) {
    violation(thread_tag() + ": " + fn + " on " + describe(c) +
              " after ncclCommDestroy/ncclCommAbort");
    return false;
  }
  if (c->state.load() == ncclInProgress && std::strcmp(fn, "ncclCommGetAsyncError") != 0) {
    violation(thread_tag() + ": " + fn + " on " + describe(c) +
              " while its last call is still ncclInProgress (poll ncclCommGetAsyncError first)");
    return false;
  }
  return true;
}

void poll_progress(Comm* c) {
  std::vector<std::function<void()>> run;
  {
    std::lock_guard lock(c->mutex);
    if (c->state.load() != ncclInProgress || !c->ready) return;
    if (c->finalized && c->in_flight.load() > 0) return;
    if (c->split_done && !c->split_done->load()) return;  // a split waits for every rank
    c->split_done.reset();
    if (c->polls_left-- > 0) return;
    c->state = ncclSuccess;
    run.swap(c->on_ready);
  }
  for (auto& f : run) f();
}

// Queues a launch of `ops` on `stream` (the kernel's run: execute on the stream thread).
void enqueue_launch(Comm* c, Stream* stream, const std::vector<Op>& ops) {
  std::vector<Allocation*> uses;
  for (const Op& op : ops) uses.insert(uses.end(), op.uses.begin(), op.uses.end());
  ++c->in_flight;
  const std::uint64_t at = stream->enqueue(
      [c, ops] {
        execute(c, ops);
        --c->in_flight;
      },
      std::move(uses));
  note_nccl_launch(stream, at);
}

void launch(Comm* c, Stream* stream, std::vector<Op> ops, const std::string& what) {
  if (!stream->capturing()) check_launch_order(stream, what);
  auto go = [c, stream, ops = std::move(ops)]() mutable {
    if (stream->capturing()) {  // kept for the graph (graphs.cc): replayed at each launch
      stream->capture([c, ops](Stream* on) {
        std::vector<Op> run = ops;
        for (Op& op : run) {
          if (op.kind != Kind::send && op.kind != Kind::recv) op.seq = c->next_seq++;
        }
        enqueue_launch(c, on, run);
      });
      return;
    }
    enqueue_launch(c, stream, ops);
  };
  std::unique_lock lock(c->mutex);
  if (c->state.load() == ncclInProgress) {
    c->on_ready.push_back(std::move(go));
    return;
  }
  lock.unlock();
  go();
}

int group_depth() { return t_group_depth; }

bool deferred_in_open_group(const Stream* s) {
  return std::any_of(t_pending.begin(), t_pending.end(),
                     [s](const Pending& p) { return p.stream == s; });
}

ncclResult_t issue(Comm* c, cudaStream_t stream, Op op) {
  if (t_group_depth > 0) {
    t_pending.push_back({c, stream_of(stream), std::move(op)});
    return ncclSuccess;
  }
  const std::string what = std::string("nccl") + kind_name(op.kind) +
                           (fast_mode() ? std::string() : " #" + std::to_string(op.seq));
  // in_progress_polls=0: nothing pending, as NCCL's one-rank path answers (ncclEnqueueCheck polls
  // ncclCommGetAsyncError itself before it returns).
  const bool pending = !c->blocking && polls() > 0;
  if (pending) {
    std::lock_guard lock(c->mutex);
    c->state = ncclInProgress;
    c->polls_left = polls();
  }
  launch(c, stream_of(stream), {std::move(op)}, what);
  return pending ? ncclInProgress : ncclSuccess;
}

}  // namespace dbl

using namespace dbl;

DOUBLE_EXPORT ncclResult_t ncclGetVersion(int* version) {
  *version = static_cast<int>(setting("nccl_version", 22809));
  return ncclSuccess;
}

DOUBLE_EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId* id) {
  std::memset(id->internal, 0, sizeof id->internal);
  const long n = g_next_id++;
  std::memcpy(id->internal, "double", 6);
  std::memcpy(id->internal + 8, &n, sizeof n);
  const auto pid = static_cast<long>(::getpid());  // whose id it is, across processes
  std::memcpy(id->internal + 16, &pid, sizeof pid);
  return ncclSuccess;
}

namespace {
// "pid.counter" of a unique id made by ncclGetUniqueId above.
std::string id_text(const ncclUniqueId& id) {
  long n = 0;
  long pid = 0;
  std::memcpy(&n, id.internal + 8, sizeof n);
  std::memcpy(&pid, id.internal + 16, sizeof pid);
  return std::to_string(pid) + "." + std::to_string(n);
}

// init_alone_wait_ms: until every rank of this id logged its init in the shared log file (a
// launcher such as torchrun stops the other processes once one fails), at most that long.
void wait_for_other_inits(const std::string& id, int nranks) {
  const char* path = std::getenv("TWINCCL_DOUBLE_LOG_FILE");
  const long wait_ms = setting("init_alone_wait_ms", 0);
  if (path == nullptr || wait_ms <= 0) return;
  const std::string mark = " nranks=" + std::to_string(nranks) + " ";
  const auto deadline = Clock::now() + std::chrono::milliseconds(wait_ms);
  for (;;) {
    int seen = 0;
    if (FILE* f = std::fopen(path, "r")) {
      char line[512];
      while (std::fgets(line, sizeof line, f) != nullptr) {
        const std::string text(line);
        if (text.find(mark) != std::string::npos &&
            text.find(" id=" + id + "\n") != std::string::npos)
          ++seen;
      }
      std::fclose(f);
    }
    if (seen >= nranks || Clock::now() >= deadline) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}
}  // namespace

DOUBLE_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t* out, int nranks, ncclUniqueId id,
                                                  int rank, ncclConfig_t* config) {
  if (nranks > 1 && setting("init_alone", 0) != 0) {
    // Ranks in other processes (a launcher's) cannot meet in this double: log the mapping the
    // backend asked for, then fail at once so the processes end quickly.
    log_line("pid " + std::to_string(::getpid()) + " ncclCommInitRankConfig rank=" +
             std::to_string(rank) + " nranks=" + std::to_string(nranks) +
             " device=" + std::to_string(current_device()) + " id=" + id_text(id));
    wait_for_other_inits(id_text(id), nranks);
    set_last_error("recording double (init_alone=1): ranks of other processes cannot meet here");
    return ncclSystemError;
  }
  std::shared_ptr<Clique> clique;
  {
    std::lock_guard lock(g_ids_mutex);
    auto& slot = g_cliques[std::string(id.internal, sizeof id.internal)];
    if (!slot) {
      slot = std::make_shared<Clique>();
      slot->nranks = nranks;
      slot->members.resize(static_cast<std::size_t>(nranks));
    }
    clique = slot;
  }
  if (nranks != clique->nranks || rank < 0 || rank >= nranks) {
    violation(thread_tag() + ": ncclCommInitRankConfig rank " + std::to_string(rank) + " of " +
              std::to_string(nranks) + " does not fit the clique of " +
              std::to_string(clique->nranks));
    return ncclInvalidArgument;
  }
  Comm* c = new_comm(config);
  c->clique = clique;
  c->rank = rank;
  set_thread_rank(rank);
  log_line(thread_tag() + " ncclCommInitRankConfig nranks=" + std::to_string(nranks) +
           " name=" + c->name + " blocking=" + std::to_string(c->blocking ? 1 : 0) +
           " device=" + std::to_string(c->device));
  std::vector<Comm*> ready;
  {
    std::lock_guard lock(clique->mutex);
    const bool reject =
        setting("reject_duplicate_gpu", setting("nccl_version", 22809) < 23000 ? 1 : 0) != 0;
    for (Comm* m : clique->members) {
      if (reject && m != nullptr && m->device == c->device) {
        set_last_error("Duplicate GPU detected: rank " + std::to_string(rank) + " and rank " +
                       std::to_string(m->rank) + " both on device " + std::to_string(c->device));
        return ncclInvalidUsage;
      }
    }
    if (clique->members[static_cast<std::size_t>(rank)] != nullptr) return ncclInvalidArgument;
    clique->members[static_cast<std::size_t>(rank)] = c;
    if (++clique->joined == clique->nranks) ready = clique->members;
  }
  for (Comm* m : ready) make_ready(m);
  *out = reinterpret_cast<ncclComm_t>(c);
  if (!c->blocking) return ncclInProgress;
  return wait_ready(c) ? ncclSuccess : ncclSystemError;
}

DOUBLE_EXPORT ncclResult_t ncclCommSplit(ncclComm_t parent_handle, int color, int key,
                                         ncclComm_t* out, ncclConfig_t* config) {
  auto* parent = reinterpret_cast<Comm*>(parent_handle);
  ncclResult_t rc;
  if (!usable(parent, "ncclCommSplit", &rc)) return rc;
  if (t_group_depth > 0) violation(describe(parent) + ": ncclCommSplit inside an open group");
  log_line(thread_tag() + " ncclCommSplit " + describe(parent) + " color=" + std::to_string(color) +
           " key=" + std::to_string(key) +
           " name=" + (config != nullptr && config->commName != nullptr ? config->commName : "?"));
  Clique& clique = *parent->clique;
  Comm* child = color == NCCL_SPLIT_NOCOLOR ? nullptr : new_comm(config);
  if (child != nullptr && !parent->blocking) {
    child->state = ncclSuccess;  // NCCL tracks the split on the parent; the child starts ready
    child->polls_left = 0;
  }
  std::shared_ptr<std::atomic<bool>> all_arrived;
  std::vector<Comm*> ready;
  {
    std::lock_guard lock(clique.mutex);
    auto& slot = clique.splits[parent->next_split++];
    if (slot.color_key.empty()) {
      slot.color_key.resize(static_cast<std::size_t>(clique.nranks));
      slot.children.resize(static_cast<std::size_t>(clique.nranks));
    }
    all_arrived = slot.all_arrived;
    slot.color_key[static_cast<std::size_t>(parent->rank)] = std::pair{color, key};
    slot.children[static_cast<std::size_t>(parent->rank)] = child;
    if (++slot.arrived == clique.nranks) {
      std::map<int, std::vector<std::pair<std::pair<int, int>, int>>>
          by_color;  // color -> ((key, rank), rank)
      for (int r = 0; r < clique.nranks; ++r) {
        const auto [col, k] = *slot.color_key[static_cast<std::size_t>(r)];
        if (col != NCCL_SPLIT_NOCOLOR) by_color[col].push_back({{k, r}, r});
      }
      for (auto& [col, members] : by_color) {
        std::sort(members.begin(), members.end());
        auto sub = std::make_shared<Clique>();
        sub->nranks = static_cast<int>(members.size());
        for (std::size_t i = 0; i < members.size(); ++i) {
          Comm* m = slot.children[static_cast<std::size_t>(members[i].second)];
          m->clique = sub;
          m->rank = static_cast<int>(i);
          sub->members.push_back(m);
          ready.push_back(m);
        }
        sub->joined = sub->nranks;
      }
      slot.done = true;
      *slot.all_arrived = true;
    }
  }
  for (Comm* m : ready) make_ready(m);
  if (!parent->blocking) {
    // NCCL's rule: *newcomm stays NULL until the parent's ncclCommGetAsyncError says ncclSuccess;
    // polling the (null) child, or using it early, is reported by usable().
    *out = nullptr;
    std::lock_guard lock(parent->mutex);
    parent->state = ncclInProgress;
    parent->polls_left = polls();
    parent->split_done = all_arrived;
    parent->on_ready.push_back([out, child] { *out = reinterpret_cast<ncclComm_t>(child); });
    return ncclInProgress;
  }
  *out = reinterpret_cast<ncclComm_t>(child);
  if (child == nullptr) return ncclSuccess;
  return wait_ready(child) ? ncclSuccess : ncclSystemError;
}

DOUBLE_EXPORT ncclResult_t ncclCommFinalize(ncclComm_t handle) {
  auto* c = reinterpret_cast<Comm*>(handle);
  ncclResult_t rc;
  if (!usable(c, "ncclCommFinalize", &rc)) return rc;
  log_line(thread_tag() + " ncclCommFinalize " + describe(c));
  std::lock_guard lock(c->mutex);
  c->finalized = true;
  if (c->blocking) {
    if (c->in_flight.load() > 0) {
      violation(describe(c) +
                ": blocking ncclCommFinalize with operations in flight (an unbounded host wait)");
    }
    return ncclSuccess;
  }
  c->state = ncclInProgress;
  c->polls_left = polls();
  return ncclInProgress;
}

DOUBLE_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t handle) {
  auto* c = reinterpret_cast<Comm*>(handle);
  ncclResult_t rc;
  if (!usable(c, "ncclCommDestroy", &rc)) return rc;
  log_line(thread_tag() + " ncclCommDestroy " + describe(c));
  if (c->in_flight.load() > 0)
    violation(describe(c) + ": ncclCommDestroy with operations in flight");
  c->destroyed = true;
  return ncclSuccess;
}

DOUBLE_EXPORT ncclResult_t ncclCommAbort(ncclComm_t handle) {
  auto* c = reinterpret_cast<Comm*>(handle);
  if (c == nullptr) return ncclSuccess;
  if (c->destroyed || c->aborted) {
    violation(thread_tag() + ": ncclCommAbort on " + describe(c) +
              " after ncclCommDestroy/ncclCommAbort");
    return ncclInvalidUsage;
  }
  log_line(thread_tag() + " ncclCommAbort " + describe(c));
  c->aborted = true;  // its stream work stops waiting for peers and completes
  c->clique->cv.notify_all();
  return ncclSuccess;
}

DOUBLE_EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t handle, ncclResult_t* result) {
  auto* c = reinterpret_cast<Comm*>(handle);
  ncclResult_t rc;
  if (!usable(c, "ncclCommGetAsyncError", &rc)) return rc;
  poll_progress(c);
  *result = static_cast<ncclResult_t>(c->state.load());
  return ncclSuccess;
}

DOUBLE_EXPORT ncclResult_t ncclCommUserRank(ncclComm_t handle, int* rank) {
  auto* c = reinterpret_cast<Comm*>(handle);
  ncclResult_t rc;
  if (!usable(c, "ncclCommUserRank", &rc)) return rc;
  *rank = c->rank;
  return ncclSuccess;
}

DOUBLE_EXPORT ncclResult_t ncclCommCount(ncclComm_t handle, int* count) {
  auto* c = reinterpret_cast<Comm*>(handle);
  ncclResult_t rc;
  if (!usable(c, "ncclCommCount", &rc)) return rc;
  *count = c->clique->nranks;
  return ncclSuccess;
}

DOUBLE_EXPORT const char* ncclGetErrorString(ncclResult_t r) {
  switch (r) {
    case ncclSuccess:
      return "no error";
    case ncclInvalidArgument:
      return "invalid argument";
    case ncclInvalidUsage:
      return "invalid usage";
    case ncclInProgress:
      return "in progress";
    case ncclRemoteError:
      return "remote process exited or there was a network error";
    default:
      return "unhandled error (double)";
  }
}

DOUBLE_EXPORT const char* ncclGetLastError(ncclComm_t) { return t_last_error.c_str(); }

DOUBLE_EXPORT ncclResult_t ncclGroupStart() {
  ++t_group_depth;
  log_line(thread_tag() + " ncclGroupStart depth=" + std::to_string(t_group_depth));
  return ncclSuccess;
}

DOUBLE_EXPORT ncclResult_t ncclGroupEnd() {
  if (t_group_depth == 0) {
    violation(thread_tag() + ": ncclGroupEnd without ncclGroupStart");
    return ncclInvalidUsage;
  }
  log_line(thread_tag() + " ncclGroupEnd depth=" + std::to_string(t_group_depth));
  if (--t_group_depth > 0) return ncclSuccess;
  std::vector<Pending> pending;
  pending.swap(t_pending);
  std::vector<Comm*> comms;
  for (const Pending& p : pending) {
    if (std::find(comms.begin(), comms.end(), p.comm) == comms.end()) comms.push_back(p.comm);
  }
  bool in_progress = false;
  for (Comm* c : comms) {
    std::vector<Op> ops;
    Stream* stream = nullptr;
    for (Pending& p : pending) {
      if (p.comm != c) continue;
      if (stream != nullptr && stream != p.stream)
        violation(describe(c) + ": one group uses two streams");
      stream = p.stream;
      ops.push_back(std::move(p.op));
    }
    if (!c->blocking) {
      std::lock_guard lock(c->mutex);
      c->state = ncclInProgress;
      c->polls_left = polls();
      in_progress = true;
    }
    launch(c, stream, std::move(ops), "group of " + describe(c));
  }
  return in_progress ? ncclInProgress : ncclSuccess;
}
