// NCCL collectives and send/recv in the test double: argument checks at the call, data movement
// on the stream threads (see double.h, comm.h).
//
// How it works: a call checks its buffers against the live cudaMalloc allocations and NCCL's
// in-place rules, logs one line and is issued (or deferred by the thread's open group). On the
// stream thread, execute() posts the launch's sends/receives to the clique's mailboxes (the k-th
// send from a to b meets the k-th receive at b from a), then meets the other ranks at each
// collective's sequence number; the last to arrive checks that every rank called the same thing
// (kind, count, type, op, root) and moves the data for all, in host memory.
#include <algorithm>
#include <cstring>

#include "nccl_double/comm.h"
#include "twinccl/reduce_kernels.h"

namespace dbl {
namespace {

twinccl::DataType to_type(ncclDataType_t t) {
  using twinccl::DataType;
  static const DataType map[] = {DataType::int8,     DataType::uint8,       DataType::int32,
                                 DataType::uint32,   DataType::int64,       DataType::uint64,
                                 DataType::float16,  DataType::float32,     DataType::float64,
                                 DataType::bfloat16, DataType::float8_e4m3, DataType::float8_e5m2};
  return map[static_cast<int>(t)];
}
std::size_t bytes_of(ncclDataType_t t, std::size_t n) { return n * twinccl::size_of(to_type(t)); }
bool is_fp8(ncclDataType_t t) { return t == ncclFloat8e4m3 || t == ncclFloat8e5m2; }
bool is_reduction(Kind k) {
  return k == Kind::all_reduce || k == Kind::reduce_scatter || k == Kind::reduce;
}

// Contribution of one rank: its send buffer, scaled by its premul_sum scalar.
std::vector<char> contribution(const Op& op, std::size_t n) {
  std::vector<char> out(bytes_of(op.type, n));
  if (n == 0) return out;
  if (op.premul)
    twinccl::scale_elements(to_type(op.type), op.scalar, out.data(), op.send, n);
  else
    std::memcpy(out.data(), op.send, out.size());
  return out;
}

std::vector<char> reduce_all(const std::vector<std::optional<Op>>& ops, std::size_t n) {
  const Op& first = *ops[0];
  const auto type = to_type(first.type);
  std::vector<char> acc = contribution(first, n);
  const int red = first.premul ? ncclSum : first.red;
  const auto kind = red == ncclProd  ? twinccl::ReduceKind::prod
                    : red == ncclMax ? twinccl::ReduceKind::max
                    : red == ncclMin ? twinccl::ReduceKind::min
                                     : twinccl::ReduceKind::sum;
  for (std::size_t r = 1; r < ops.size() && n > 0; ++r) {
    const std::vector<char> c = contribution(*ops[r], n);
    twinccl::reduce_elements(type, kind, acc.data(), acc.data(), c.data(), n);
  }
  if (red == ncclAvg && n > 0) {
    const auto nranks = static_cast<std::int64_t>(ops.size());
    if (twinccl::is_floating(type))
      twinccl::scale_elements(type, 1.0 / static_cast<double>(nranks), acc.data(), acc.data(), n);
    else
      twinccl::divide_elements(type, nranks, acc.data(), acc.data(), n);
  }
  return acc;
}

// As NCCL 2.19 .. 2.28.9 at one rank (src/device/onerank.cu, ncclLaunchOneRank): a PreMulSum
// reduction (premul_sum, avg on floating types) runs on min(32, ceil(bytes / 16 KiB)) blocks of
// alignUp(floor(n / blocks), 16 bytes) elements, so the elements past blocks x that stay
// unwritten. The double writes only what that kernel writes, so the backend must work around it.
std::size_t one_rank_written(const Op& op, std::size_t n) {
  const auto type = to_type(op.type);
  const bool kernel =
      op.premul || (op.red == ncclAvg && twinccl::is_floating(type) && !is_fp8(op.type));
  if (!kernel || n == 0) return n;
  const std::size_t e = twinccl::size_of(type);
  const std::size_t blocks = std::min<std::size_t>(32, (n * e + 16383) / 16384);
  const std::size_t pack = 16 / e;
  const std::size_t each = (n / blocks + pack - 1) / pack * pack;
  return std::min(n, blocks * each);
}

// Every rank arrived with `ops` (by rank): same call? then move the data.
void perform(Clique& q, const std::vector<std::optional<Op>>& ops) {
  const Op& a = *ops[0];
  for (std::size_t r = 1; r < ops.size(); ++r) {
    const Op& b = *ops[r];
    if (b.kind != a.kind || b.count != a.count || b.type != a.type || b.premul != a.premul ||
        (!a.premul && b.red != a.red) || b.root != a.root) {
      violation("collective #" + std::to_string(a.seq) + " differs between ranks: rank 0 called " +
                kind_name(a.kind) + " count=" + std::to_string(a.count) +
                " type=" + std::to_string(a.type) + " root=" + std::to_string(a.root) + ", rank " +
                std::to_string(r) + " called " + kind_name(b.kind) +
                " count=" + std::to_string(b.count) + " type=" + std::to_string(b.type) +
                " root=" + std::to_string(b.root));
      for (Comm* m : q.members) m->state = ncclInvalidUsage;
      return;
    }
  }
  const std::size_t n = a.count;
  const std::size_t block = bytes_of(a.type, n);
  const auto nranks = ops.size();
  // One rank: what NCCL's one-rank kernel really writes of a reduction.
  const std::size_t reduced =
      nranks == 1 && is_reduction(a.kind) ? bytes_of(a.type, one_rank_written(a, n)) : block;
  switch (a.kind) {
    case Kind::all_reduce: {
      const auto acc = reduce_all(ops, n);
      for (const auto& o : ops) std::memcpy(o->recv, acc.data(), reduced);
      break;
    }
    case Kind::reduce: {
      const auto acc = reduce_all(ops, n);
      std::memcpy(ops[static_cast<std::size_t>(a.root)]->recv, acc.data(), reduced);
      break;
    }
    case Kind::reduce_scatter: {
      const auto acc = reduce_all(ops, n * nranks);
      for (std::size_t r = 0; r < nranks; ++r)
        std::memcpy(ops[r]->recv, acc.data() + r * block, reduced);
      break;
    }
    case Kind::broadcast: {
      const std::vector<char> src(
          static_cast<const char*>(ops[static_cast<std::size_t>(a.root)]->send),
          static_cast<const char*>(ops[static_cast<std::size_t>(a.root)]->send) + block);
      for (const auto& o : ops) std::memcpy(o->recv, src.data(), block);
      break;
    }
    case Kind::all_gather:
    case Kind::gather: {
      std::vector<char> all(block * nranks);
      for (std::size_t r = 0; r < nranks; ++r)
        std::memcpy(all.data() + r * block, ops[r]->send, block);
      for (std::size_t r = 0; r < nranks; ++r) {
        if (a.kind == Kind::all_gather || static_cast<int>(r) == a.root)
          std::memcpy(ops[r]->recv, all.data(), all.size());
      }
      break;
    }
    case Kind::scatter: {
      const char* src = static_cast<const char*>(ops[static_cast<std::size_t>(a.root)]->send);
      const std::vector<char> all(src, src + block * nranks);
      for (std::size_t r = 0; r < nranks; ++r)
        std::memcpy(ops[r]->recv, all.data() + r * block, block);
      break;
    }
    case Kind::all_to_all: {
      std::vector<std::vector<char>> sends;
      for (const auto& o : ops)
        sends.emplace_back(static_cast<const char*>(o->send),
                           static_cast<const char*>(o->send) + block * nranks);
      for (std::size_t r = 0; r < nranks; ++r) {
        for (std::size_t p = 0; p < nranks; ++p)
          std::memcpy(static_cast<char*>(ops[r]->recv) + p * block, sends[p].data() + r * block,
                      block);
      }
      break;
    }
    case Kind::send:
    case Kind::recv:
      break;
  }
}

// Posts one send/recv; matches it with the other side's when that is already posted.
void post(Comm* c, const Op& op, bool* done) {
  Clique& q = *c->clique;
  std::lock_guard lock(q.mutex);
  const bool sending = op.kind == Kind::send;
  const std::pair<int, int> key =
      sending ? std::pair{c->rank, op.root} : std::pair{op.root, c->rank};
  auto& mine = sending ? q.sends[key] : q.recvs[key];
  auto& theirs = sending ? q.recvs[key] : q.sends[key];
  if (theirs.empty()) {
    mine.push_back({op, done});
    return;
  }
  const Clique::Message other = theirs.front();
  theirs.pop_front();
  const Op& s = sending ? op : other.op;
  const Op& r = sending ? other.op : op;
  if (s.count != r.count || s.type != r.type) {
    violation("send from rank " + std::to_string(key.first) + " to rank " +
              std::to_string(key.second) + " (" + std::to_string(s.count) + " x type " +
              std::to_string(s.type) + ") meets a recv of " + std::to_string(r.count) + " x type " +
              std::to_string(r.type));
  } else if (s.count > 0) {
    std::memmove(r.recv, s.send, bytes_of(s.type, s.count));
  }
  *done = true;
  *other.done = true;
  q.cv.notify_all();
}

template <class Pred>
void wait_on(Comm* c, Pred&& ready) {
  Clique& q = *c->clique;
  std::unique_lock lock(q.mutex);
  while (!ready() && !c->aborted.load()) q.cv.wait_for(lock, std::chrono::milliseconds(50));
}

}  // namespace

const char* kind_name(Kind k) {
  static const char* names[] = {"AllReduce", "ReduceScatter", "AllGather", "Broadcast", "Reduce",
                                "AlltoAll",  "Gather",        "Scatter",   "Send",      "Recv"};
  return names[static_cast<int>(k)];
}

void execute(Comm* c, const std::vector<Op>& ops) {
  auto done = std::make_unique<bool[]>(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) {
    done[i] = false;
    if (ops[i].kind == Kind::send || ops[i].kind == Kind::recv) post(c, ops[i], &done[i]);
  }
  Clique& q = *c->clique;
  for (const Op& op : ops) {
    if (op.kind == Kind::send || op.kind == Kind::recv) continue;
    Clique::Slot* slot = nullptr;
    {
      std::lock_guard lock(q.mutex);
      slot = &q.collectives[op.seq];
      if (slot->ops.empty()) slot->ops.resize(static_cast<std::size_t>(q.nranks));
      slot->ops[static_cast<std::size_t>(c->rank)] = op;
      if (++slot->arrived == q.nranks) {
        perform(q, slot->ops);
        slot->done = true;
        q.cv.notify_all();
      }
    }
    wait_on(c, [&] { return slot->done; });
  }
  for (std::size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].kind == Kind::send || ops[i].kind == Kind::recv) wait_on(c, [&] { return done[i]; });
  }
}

}  // namespace dbl

using namespace dbl;

namespace {

// Checks and issues one call. send_elems/recv_elems: what NCCL reads/writes on this rank.
ncclResult_t call(Kind kind, const void* send, void* recv, std::size_t count, ncclDataType_t type,
                  int red, int root, ncclComm_t handle, cudaStream_t stream) {
  auto* c = reinterpret_cast<Comm*>(handle);
  const std::string fn = std::string("nccl") + kind_name(kind);
  ncclResult_t rc;
  if (!usable(c, fn.c_str(), &rc)) return rc;
  const auto n = static_cast<std::size_t>(c->clique->nranks);
  Op op{kind, send, recv, count, type, red, 1.0, false, root, 0, {}};
  if (red >= static_cast<int>(ncclNumOps)) {
    const auto index = static_cast<std::size_t>(red - static_cast<int>(ncclNumOps));
    if (index >= c->premul_ops.size()) return ncclInvalidArgument;
    op.premul = true;
    op.scalar = c->premul_ops[index].second;
  }
  if (is_fp8(type) && is_reduction(kind)) {
    if (setting("sm_major", 9) < 9) {
      set_last_error("fp8 reductions need sm_90 or newer");
      return ncclInvalidArgument;
    }
    if (n == 1 && (op.premul || red == ncclAvg)) {
      set_last_error("the one-rank path (ncclLaunchOneRank) does not support fp8 avg/premul_sum");
      return ncclInvalidArgument;
    }
  }
  const bool p2p = kind == Kind::send || kind == Kind::recv;
  if (!p2p) op.seq = c->next_seq++;
  const bool at_root = c->rank == root;
  std::size_t send_n = count;
  std::size_t recv_n = count;
  switch (kind) {
    case Kind::reduce_scatter:
      send_n = n * count;
      break;
    case Kind::all_gather:
      recv_n = n * count;
      break;
    case Kind::all_to_all:
      send_n = recv_n = n * count;
      break;
    case Kind::gather:
      recv_n = at_root ? n * count : 0;
      break;
    case Kind::scatter:
      send_n = at_root ? n * count : 0;
      break;
    case Kind::broadcast:
      send_n = at_root ? count : 0;
      break;
    case Kind::reduce:
      recv_n = at_root ? count : 0;
      break;
    case Kind::send:
      recv_n = 0;
      break;
    case Kind::recv:
      send_n = 0;
      break;
    default:
      break;
  }
  const bool fast = fast_mode();  // a benchmark on the double: no messages built, no log
  const std::string what =
      fast ? fn : thread_tag() + ": " + fn + " #" + std::to_string(op.seq) + " on " + describe(c);
  const std::size_t sb = bytes_of(type, send_n);
  const std::size_t rb = bytes_of(type, recv_n);
  if (count > 0 && send_n > 0) op.uses.push_back(find_allocation(send, sb, what + " sendbuff"));
  if (count > 0 && recv_n > 0) op.uses.push_back(find_allocation(recv, rb, what + " recvbuff"));
  for (Allocation* a : op.uses) {
    if (a == nullptr) return ncclInvalidArgument;
  }
  const char* s = static_cast<const char*>(send);
  const char* r = static_cast<const char*>(recv);
  bool in_place = send_n > 0 && recv_n > 0 && s == r;
  if (kind == Kind::reduce_scatter) in_place = r == s + c->rank * rb;
  if (kind == Kind::all_gather) in_place = s == r + c->rank * sb;
  const bool overlap = send_n > 0 && recv_n > 0 && s < r + rb && r < s + sb;
  if (overlap && !in_place)
    violation(what + ": send and recv buffers overlap but are not NCCL's in-place layout");
  if (overlap && kind == Kind::all_to_all)
    violation(what + ": ncclAlltoAll does not support in-place operation");
  if (!fast)
    log_line(thread_tag() + " comm=" + c->name + " " + fn + " seq=" + std::to_string(op.seq) +
             " count=" + std::to_string(count) + " type=" + std::to_string(type) +
             " op=" + (op.premul ? std::string("premul") : std::to_string(red)) +
             " root=" + std::to_string(root) + " inplace=" + std::to_string(in_place ? 1 : 0) +
             " group=" + std::to_string(group_depth()) +
             " stream=" + std::to_string(stream_of(stream)->id()) +
             (stream_of(stream)->capturing() ? " captured=1" : ""));
  if (count == 0 && p2p) return ncclSuccess;
  note_collective_launched();
  return issue(c, stream, std::move(op));
}

}  // namespace

DOUBLE_EXPORT ncclResult_t ncclAllReduce(const void* s, void* r, size_t n, ncclDataType_t t,
                                         ncclRedOp_t op, ncclComm_t c, cudaStream_t st) {
  return call(Kind::all_reduce, s, r, n, t, op, -1, c, st);
}
DOUBLE_EXPORT ncclResult_t ncclReduceScatter(const void* s, void* r, size_t n, ncclDataType_t t,
                                             ncclRedOp_t op, ncclComm_t c, cudaStream_t st) {
  return call(Kind::reduce_scatter, s, r, n, t, op, -1, c, st);
}
DOUBLE_EXPORT ncclResult_t ncclAllGather(const void* s, void* r, size_t n, ncclDataType_t t,
                                         ncclComm_t c, cudaStream_t st) {
  return call(Kind::all_gather, s, r, n, t, ncclSum, -1, c, st);
}
DOUBLE_EXPORT ncclResult_t ncclBroadcast(const void* s, void* r, size_t n, ncclDataType_t t,
                                         int root, ncclComm_t c, cudaStream_t st) {
  return call(Kind::broadcast, s, r, n, t, ncclSum, root, c, st);
}
DOUBLE_EXPORT ncclResult_t ncclReduce(const void* s, void* r, size_t n, ncclDataType_t t,
                                      ncclRedOp_t op, int root, ncclComm_t c, cudaStream_t st) {
  return call(Kind::reduce, s, r, n, t, op, root, c, st);
}
DOUBLE_EXPORT ncclResult_t ncclAlltoAll(const void* s, void* r, size_t n, ncclDataType_t t,
                                        ncclComm_t c, cudaStream_t st) {
  return call(Kind::all_to_all, s, r, n, t, ncclSum, -1, c, st);
}
DOUBLE_EXPORT ncclResult_t ncclGather(const void* s, void* r, size_t n, ncclDataType_t t, int root,
                                      ncclComm_t c, cudaStream_t st) {
  return call(Kind::gather, s, r, n, t, ncclSum, root, c, st);
}
DOUBLE_EXPORT ncclResult_t ncclScatter(const void* s, void* r, size_t n, ncclDataType_t t, int root,
                                       ncclComm_t c, cudaStream_t st) {
  return call(Kind::scatter, s, r, n, t, ncclSum, root, c, st);
}
DOUBLE_EXPORT ncclResult_t ncclSend(const void* s, size_t n, ncclDataType_t t, int peer,
                                    ncclComm_t c, cudaStream_t st) {
  return call(Kind::send, s, nullptr, n, t, ncclSum, peer, c, st);
}
DOUBLE_EXPORT ncclResult_t ncclRecv(void* r, size_t n, ncclDataType_t t, int peer, ncclComm_t c,
                                    cudaStream_t st) {
  return call(Kind::recv, nullptr, r, n, t, ncclSum, peer, c, st);
}

DOUBLE_EXPORT ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t t,
                                                    ncclScalarResidence_t residence,
                                                    ncclComm_t handle) {
  auto* c = reinterpret_cast<Comm*>(handle);
  ncclResult_t rc;
  if (!usable(c, "ncclRedOpCreatePreMulSum", &rc)) return rc;
  if (residence != ncclScalarHostImmediate) return ncclInvalidArgument;
  std::lock_guard lock(c->mutex);
  c->premul_ops.push_back({static_cast<int>(t), twinccl::element_as_double(to_type(t), scalar, 0)});
  *op = static_cast<ncclRedOp_t>(static_cast<int>(ncclNumOps) +
                                 static_cast<int>(c->premul_ops.size()) - 1);
  return ncclSuccess;
}

DOUBLE_EXPORT ncclResult_t ncclRedOpDestroy(ncclRedOp_t, ncclComm_t handle) {
  auto* c = reinterpret_cast<Comm*>(handle);
  ncclResult_t rc;
  return usable(c, "ncclRedOpDestroy", &rc) ? ncclSuccess : rc;
}
