// The per-rank schedule cache and reused staging (emu/src/schedule_cache.h): a rank reuses its
// schedules and working memory from call to call, so results must stay bit-exact when one pair
// of buffers serves calls of changing kind, count, dtype, op, placement and algorithm, and the
// cache must stay within its bound however many distinct shapes go by.
#include <catch2/catch.hpp>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "../../emu/src/schedule_cache.h"
#include "support/harness.h"
#include "twinccl/algorithms.h"
#include "twinccl/errors.h"
#include "twinccl/reference.h"

using namespace twinccl;
using namespace twinccl::testing;

namespace {

const std::set<std::string> kRingOrder{"ring", "direct", "nvls"};  // the reference's fold order
constexpr std::size_t kBufferBytes = 8 * 4097 * 8;                 // 8 ranks x 4097 x float64

struct Call {
  OpKind kind;
  DataType dtype;
  ReduceKind op;
  std::size_t count;
  bool in_place;
  std::string algorithm;  // empty: the default (the fast path unless schedule_path)
  unsigned salt;
};

// Deterministic: every rank builds the same list. Few counts, so shapes repeat (cache hits), and
// more distinct shapes than the cache keeps (evictions).
std::vector<Call> make_calls(int n, int how_many) {
  const OpKind kinds[] = {OpKind::all_reduce, OpKind::reduce_scatter, OpKind::all_gather,
                          OpKind::broadcast, OpKind::reduce};
  const DataType dtypes[] = {DataType::int32, DataType::float32, DataType::bfloat16,
                             DataType::float64, DataType::int8};
  const ReduceKind ops[] = {ReduceKind::sum, ReduceKind::max,        ReduceKind::prod,
                            ReduceKind::avg, ReduceKind::premul_sum, ReduceKind::min};
  const std::size_t counts[] = {0, 1, 29, 1000, 4097};
  std::vector<Call> calls;
  unsigned x = 12345;
  auto next = [&](unsigned bound) {
    x = x * 1103515245u + 12345u;
    return (x >> 16) % bound;
  };
  while (static_cast<int>(calls.size()) < how_many) {
    Call c{kinds[next(5)],
           dtypes[next(5)],
           ReduceKind::sum,
           counts[next(5)],
           next(2) == 1,
           "",
           static_cast<unsigned>(calls.size() + 1)};
    if (is_reducing(c.kind)) c.op = ops[next(6)];
    // An algorithm that applies, or the default; floats only with the reference's fold order.
    CollectiveSpec spec;
    spec.kind = c.kind;
    spec.nranks = n;
    spec.count = c.count;
    std::vector<std::string> names{""};
    for (const Algorithm* a : algorithms_for(c.kind)) {
      bool exact = !is_floating(c.dtype) || kRingOrder.count(std::string(a->name())) > 0;
      if (exact && a->why_not(spec, {}).empty()) names.emplace_back(a->name());
    }
    c.algorithm = names[next(static_cast<unsigned>(names.size()))];
    calls.push_back(c);
  }
  return calls;
}

double scalar_for(int rank) { return rank % 3 + 1; }

OpDesc as_desc(const Call& c, int rank) {
  OpDesc d;
  d.kind = c.kind;
  d.dtype = c.dtype;
  d.count = c.count;
  d.root = 0;
  d.op =
      c.op == ReduceKind::premul_sum ? ReduceOp::premul_sum(scalar_for(rank)) : ReduceOp{c.op, 1.0};
  return d;
}

// Runs `calls` on this rank with the same two buffers; returns the first wrong call, or "".
std::string run_calls(Communicator& comm, const std::vector<Call>& calls) {
  int n = comm.size(), me = comm.rank();
  std::vector<unsigned char> a(kBufferBytes), b(kBufferBytes);
  for (const Call& c : calls) {
    std::size_t e = size_of(c.dtype);
    std::vector<Bytes> inputs;
    std::vector<ReduceOp> ops;
    for (int r = 0; r < n; ++r) {
      OpDesc d = as_desc(c, r);
      inputs.push_back(make_input(c.dtype, c.op, r, send_elements(d, r, n), c.salt));
      ops.push_back(d.op);
    }
    OpDesc d = as_desc(c, me);
    std::size_t recv_bytes = recv_elements(d, me, n) * e;
    // NCCL's in-place placements (DESIGN.md): the send buffer inside the recv buffer.
    unsigned char* recv = a.data();
    unsigned char* send = c.in_place ? a.data() : b.data();
    if (c.in_place && c.kind == OpKind::reduce_scatter)
      recv = a.data() + static_cast<std::size_t>(me) * c.count * e;
    if (c.in_place && c.kind == OpKind::all_gather)
      send = a.data() + static_cast<std::size_t>(me) * c.count * e;
    std::memset(a.data(), 0xA5, a.size());  // what the previous call left, changed
    const Bytes& mine = inputs[static_cast<std::size_t>(me)];
    if (!mine.empty()) std::memcpy(send, mine.data(), mine.size());
    Bytes before(recv, recv + recv_bytes);
    CallOptions opts{false, c.algorithm};
    switch (c.kind) {
      case OpKind::all_reduce:
        comm.all_reduce(send, recv, c.count, c.dtype, d.op, opts);
        break;
      case OpKind::reduce_scatter:
        comm.reduce_scatter(send, recv, c.count, c.dtype, d.op, opts);
        break;
      case OpKind::all_gather:
        comm.all_gather(send, recv, c.count, c.dtype, opts);
        break;
      case OpKind::broadcast:
        comm.broadcast(send, recv, c.count, c.dtype, 0, opts);
        break;
      default:
        comm.reduce(send, recv, c.count, c.dtype, d.op, 0, opts);
        break;
    }
    Bytes want = reference_output(d, inputs, ops, me, before);
    if (want.size() != recv_bytes || (recv_bytes > 0 && std::memcmp(want.data(), recv, recv_bytes)))
      return "call " + std::to_string(c.salt) + " (" + std::string(name(c.kind)) + " " +
             std::string(name(c.dtype)) + " " + std::string(name(c.op)) +
             " count=" + std::to_string(c.count) + (c.in_place ? " in-place" : " out-of-place") +
             " algorithm '" + c.algorithm + "') differs from the reference on rank " +
             std::to_string(me);
  }
  return "";
}

CollectiveSpec ring_spec(int nranks, std::size_t count) {
  CollectiveSpec spec;
  spec.kind = OpKind::all_reduce;
  spec.nranks = nranks;
  spec.count = count;
  return spec;
}

bool same_schedule(const RankSchedule& x, const RankSchedule& y) {
  if (x.scratch_count != y.scratch_count || x.steps.size() != y.steps.size()) return false;
  for (std::size_t s = 0; s < x.steps.size(); ++s) {
    const auto& p = x.steps[s].ops;
    const auto& q = y.steps[s].ops;
    if (p.size() != q.size()) return false;
    for (std::size_t i = 0; i < p.size(); ++i) {
      if (p[i].kind != q[i].kind || p[i].peer != q[i].peer || !(p[i].src == q[i].src) ||
          !(p[i].src2 == q[i].src2) || !(p[i].dst == q[i].dst) || p[i].finalize != q[i].finalize)
        return false;
    }
  }
  return true;
}

}  // namespace

TEST_CASE("schedule cache: one pair of buffers, calls of changing shape interleaved, exact results",
          "[emu][schedule_cache]") {
  int n = GENERATE(3, 4, 8);
  bool schedule_path = GENERATE(true, false);
  INFO(n << " ranks, " << (schedule_path ? "schedule path" : "default path"));
  std::vector<Call> calls = make_calls(n, 120);
  std::vector<std::string> wrong(static_cast<std::size_t>(n));
  HarnessOptions o;
  o.schedule_path = schedule_path;
  run_ranks(
      n,
      [&](Communicator& comm) {
        wrong[static_cast<std::size_t>(comm.rank())] = run_calls(comm, calls);
      },
      o);
  for (const std::string& w : wrong) CHECK(w == "");
}

TEST_CASE("schedule cache: a shape seen again is not rebuilt and gives the built schedule",
          "[emu][schedule_cache]") {
  emu::RankCache cache;
  AlgorithmParams params;
  CollectiveSpec spec = ring_spec(8, 1000);
  const RankSchedule& first = cache.schedule(spec, "ring", params, 3);
  REQUIRE(same_schedule(first, build_rank_schedule(spec, "ring", params, 3)));
  for (int i = 0; i < 5; ++i) REQUIRE(&cache.schedule(spec, "ring", params, 3) == &first);
  CHECK(cache.builds() == 1);
  CHECK(cache.hits() == 5);
  // Any difference in the key is another schedule: algorithm, count, rank, params.
  CHECK(same_schedule(cache.schedule(spec, "tree", params, 3),
                      build_rank_schedule(spec, "tree", params, 3)));
  CHECK(same_schedule(cache.schedule(ring_spec(8, 1001), "ring", params, 3),
                      build_rank_schedule(ring_spec(8, 1001), "ring", params, 3)));
  CHECK(same_schedule(cache.schedule(spec, "ring", params, 4),
                      build_rank_schedule(spec, "ring", params, 4)));
  AlgorithmParams two{.channels = 2};
  CHECK(same_schedule(cache.schedule(spec, "ring", two, 3),
                      build_rank_schedule(spec, "ring", two, 3)));
  CHECK(cache.builds() == 5);
}

TEST_CASE("schedule cache: 100 distinct shapes keep at most the bound", "[emu][schedule_cache]") {
  emu::RankCache cache;
  AlgorithmParams params;
  for (std::size_t i = 0; i < 100; ++i) {
    cache.schedule(ring_spec(8, 1000 + i), "ring", params, 0);
    cache.trim(8);
    REQUIRE(cache.entries() <= emu::kMaxCachedSchedules);
    REQUIRE(cache.schedule_bytes() <= emu::rank_budget_bytes(8));
  }
  CHECK(cache.builds() == 100);
  CHECK(cache.entries() == emu::kMaxCachedSchedules);
  // The most recent shapes are the ones kept; the oldest was evicted and is built again.
  cache.schedule(ring_spec(8, 1099), "ring", params, 0);
  CHECK(cache.builds() == 100);
  cache.schedule(ring_spec(8, 1000), "ring", params, 0);
  CHECK(cache.builds() == 101);
}

TEST_CASE("schedule cache: a schedule larger than the budget runs once and is not kept",
          "[emu][schedule_cache]") {
  emu::RankCache cache;
  AlgorithmParams params;
  // 4096 ranks: the budget is the 16 KiB floor; a ring all_reduce has 8190 steps.
  const RankSchedule& s = cache.schedule(ring_spec(4096, 4096), "ring", params, 0);
  CHECK(s.steps.size() == 2 * 4095);
  cache.trim(4096);
  CHECK(cache.entries() == 0);
  CHECK(cache.schedule_bytes() == 0);
  cache.schedule(ring_spec(4096, 4096), "ring", params, 0);
  CHECK(cache.builds() == 2);
}

TEST_CASE("schedule cache: staging larger than the budget is released after the call",
          "[emu][schedule_cache]") {
  emu::RankCache cache;
  cache.staging().scratch.resize(emu::rank_budget_bytes(8) + 1);
  cache.staging().fold_acc.resize(32 * 1024);
  cache.trim(8);
  CHECK(cache.staging().bytes() <= emu::rank_budget_bytes(8));
  CHECK(cache.staging().scratch.capacity() == 0);
  CHECK(cache.staging().fold_acc.capacity() >= 32 * 1024);  // under the budget: kept warm
  cache.staging().scratch.resize(1024);
  cache.trim(8);
  CHECK(cache.staging().scratch.capacity() >= 1024);
}

TEST_CASE("schedule cache: a count mismatch after warm calls of the same shape is refused",
          "[emu][schedule_cache]") {
  CheckOptions options;
  options.schedule_path = GENERATE(true, false);
  options.timeout_s = 10;
  auto out = run_ranks_capture(
      4,
      [](Communicator& comm) {
        std::vector<float> x(1000, 1.0f), y(1000);
        for (int i = 0; i < 5; ++i)
          comm.all_reduce(x.data(), y.data(), 1000, DataType::float32, ReduceOp::sum());
        std::size_t count = comm.rank() == 2 ? 999 : 1000;
        comm.all_reduce(x.data(), y.data(), count, DataType::float32, ReduceOp::sum());
      },
      options);
  for (const RankOutcome& o : out) {
    CHECK(o.type == "MismatchError");
    CHECK(o.message.find("ranks disagree on count") != std::string::npos);
  }
}
