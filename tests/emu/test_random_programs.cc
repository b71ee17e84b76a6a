// Randomized differential test: thousands of random valid programs (random world sizes, splits or
// communicators made by their members only, collectives, counts, dtypes, reduce ops, roots,
// in-place layouts, async calls, groups and send/recv permutations) run on the emulator with every
// check on, and every output must be bit-identical to the sequential reference model. A false
// deadlock or mismatch report fails too.
//
// TWINCCL_RANDOM_PROGRAMS sets how many programs run (default 2000; the sanitizer builds use
// fewer), TWINCCL_RANDOM_SEED the first seed (default 1). A failure names the seed to replay.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "support/harness.h"
#include "twinccl/call_layout.h"
#include "twinccl/errors.h"
#include "twinccl/reduction.h"
#include "twinccl/reference.h"

using namespace twinccl;
using namespace twinccl::testing;

namespace {

struct Step {
  bool p2p = false;           // a send/recv permutation in a group, else one collective
  int colors = 1;             // the step runs on world.split(rank % colors, key) when > 1
  std::vector<int> keys;      // split key per world rank
  bool members_only = false;  // colors > 1: each color's members make theirs (subcommunicator)
  CallShape shape;            // collectives
  bool async_op = false;
  bool in_group = false;  // collective issued inside group_start/group_end
  std::vector<int> to;    // p2p: world rank r sends to[r] (a permutation of its communicator)
  unsigned salt = 0;
};

struct Program {
  int nranks = 1;
  bool schedule_path = false;
  std::vector<Step> steps;
};

std::size_t env_count(const char* name, std::size_t fallback) {
  const char* v = std::getenv(name);
  return v == nullptr ? fallback : static_cast<std::size_t>(std::strtoull(v, nullptr, 10));
}

double scalar_for(DataType dtype, int rank) {
  return is_floating(dtype) ? 0.5 * (rank % 3 + 1) : rank % 3 + 1;
}

ReduceOp op_for(ReduceKind kind, DataType dtype, int rank) {
  return kind == ReduceKind::premul_sum ? ReduceOp::premul_sum(scalar_for(dtype, rank))
                                        : ReduceOp{kind, 1.0};
}

bool supported(DataType dtype, ReduceKind kind) {
  try {
    for (int r = 0; r < 3; ++r) check_reduce_op_supported(dtype, op_for(kind, dtype, r));
    return true;
  } catch (const InvalidArgument&) {
    return false;
  }
}

Program make_program(unsigned seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const int sizes[] = {1, 2, 3, 4, 7, 8, 16};
  Program p;
  p.nranks = sizes[pick(pick(10) == 0 ? 7 : 6)];  // 16 ranks now and then
  p.schedule_path = pick(4) == 0;
  int nsteps = 1 + pick(4);
  const OpKind kinds[] = {OpKind::all_reduce, OpKind::reduce_scatter, OpKind::all_gather,
                          OpKind::broadcast,  OpKind::reduce,         OpKind::all_to_all,
                          OpKind::gather,     OpKind::scatter};
  const ReduceKind reduce_kinds[] = {ReduceKind::sum, ReduceKind::prod, ReduceKind::min,
                                     ReduceKind::max, ReduceKind::avg,  ReduceKind::premul_sum};
  const std::size_t counts[] = {0, 1, 2, 3, 5, 17, 64, 129, 1000, 4099};
  for (int s = 0; s < nsteps; ++s) {
    Step step;
    step.salt = seed * 16 + static_cast<unsigned>(s);
    if (p.nranks > 1 && pick(3) == 0) {
      step.colors = 1 + pick(std::min(p.nranks, 3));
      for (int r = 0; r < p.nranks; ++r) step.keys.push_back(pick(5));
      step.members_only = (step.salt / 3) % 2 == 1;  // (no draw: the programs stay as they were)
    }
    step.p2p = pick(5) == 0;
    DataType dtype = kAllDataTypes[static_cast<std::size_t>(pick(12))];
    std::size_t count = counts[static_cast<std::size_t>(pick(10))];
    if (step.p2p) {
      step.shape.dtype = dtype;
      step.shape.count = count;
    } else {
      OpKind kind = kinds[pick(8)];
      ReduceKind rk = reduce_kinds[pick(6)];
      if (!supported(dtype, rk)) rk = ReduceKind::sum;
      if (!supported(dtype, rk)) dtype = DataType::float32;
      step.shape = CallShape{kind, dtype, ReduceOp{rk, 1.0}, count, 0, pick(2) == 0};
      step.async_op = pick(3) == 0;
      step.in_group = pick(4) == 0;
    }
    p.steps.push_back(std::move(step));
  }
  return p;
}

// Members of each color of `step`, ordered as split() orders them: by (key, world rank).
std::map<int, std::vector<int>> members(const Program& p, const Step& step) {
  std::map<int, std::vector<std::pair<int, int>>> by_color;
  for (int r = 0; r < p.nranks; ++r)
    by_color[r % step.colors].push_back(
        {step.colors > 1 ? step.keys[static_cast<std::size_t>(r)] : 0, r});
  std::map<int, std::vector<int>> out;
  for (auto& [color, list] : by_color) {
    std::sort(list.begin(), list.end());
    for (auto [key, r] : list) out[color].push_back(r);
  }
  return out;
}

// The root and the p2p permutation depend on the communicator's size: fixed per color from the
// seed.
int root_of(const Step& step, int size) {
  return static_cast<int>(step.salt % static_cast<unsigned>(size));
}
int send_to(const Step& step, int comm_rank, int size) {
  int shift = static_cast<int>(step.salt % static_cast<unsigned>(size));
  return (comm_rank + shift) % size;
}

// Reference outputs: result[step][world rank].
std::vector<std::vector<Bytes>> reference(const Program& p) {
  std::vector<std::vector<Bytes>> out(p.steps.size(),
                                      std::vector<Bytes>(static_cast<std::size_t>(p.nranks)));
  for (std::size_t s = 0; s < p.steps.size(); ++s) {
    const Step& step = p.steps[s];
    for (const auto& [color, ranks] : members(p, step)) {
      int n = static_cast<int>(ranks.size());
      CallShape shape = step.shape;
      if (step.p2p) {
        for (int q = 0; q < n; ++q) {
          int from = (q - (send_to(step, 0, n)) + n) % n;  // the comm rank sending to q
          out[s][static_cast<std::size_t>(ranks[static_cast<std::size_t>(q)])] =
              make_input(shape.dtype, ReduceKind::sum, ranks[static_cast<std::size_t>(from)],
                         shape.count, step.salt);
        }
        continue;
      }
      shape.root = root_of(step, n);
      OpDesc call;
      call.kind = shape.kind;
      call.dtype = shape.dtype;
      call.count = shape.count;
      call.root = shape.root;
      std::vector<Bytes> inputs;
      std::vector<ReduceOp> ops;
      for (int q = 0; q < n; ++q) {
        ops.push_back(op_for(shape.op.kind, shape.dtype, q));
        call.op = ops.back();
        inputs.push_back(make_input(shape.dtype, shape.op.kind, ranks[static_cast<std::size_t>(q)],
                                    send_elements(call, q, n), step.salt));
      }
      call.op = ops[0];
      for (int q = 0; q < n; ++q) {
        Bytes before(recv_elements(call, q, n) * size_of(shape.dtype), 0);
        out[s][static_cast<std::size_t>(ranks[static_cast<std::size_t>(q)])] =
            reference_output(call, inputs, ops, q, before);
      }
    }
  }
  return out;
}

// One rank's run of the program: its outputs per step.
std::vector<Bytes> run_rank(Communicator& world, const Program& p) {
  std::vector<Bytes> results;
  for (const Step& step : p.steps) {
    std::unique_ptr<Communicator> sub;
    Communicator* comm = &world;
    if (step.colors > 1 && step.members_only) {
      // The same members in the same order as the split below, made by them alone.
      const int color = world.rank() % step.colors;
      sub = world.subcommunicator(members(p, step).at(color), "color" + std::to_string(color));
      comm = sub.get();
    } else if (step.colors > 1) {
      sub = world.split(world.rank() % step.colors,
                        step.keys[static_cast<std::size_t>(world.rank())]);
      comm = sub.get();
    }
    int n = comm->size(), me = comm->rank();
    if (step.p2p) {
      Buffer out = comm->alloc(step.shape.count, step.shape.dtype),
             in = comm->alloc(step.shape.count, step.shape.dtype);
      Bytes mine =
          make_input(step.shape.dtype, ReduceKind::sum, world.rank(), step.shape.count, step.salt);
      out.copy_from_host(mine.data(), mine.size());
      int to = send_to(step, me, n), from = (me - send_to(step, 0, n) + n) % n;
      comm->group_start();
      comm->send(out, to);
      comm->recv(in, from);
      comm->group_end();
      Bytes received(in.bytes());
      in.copy_to_host(received.data(), received.size());
      results.push_back(std::move(received));
      continue;
    }
    CallShape shape = step.shape;
    shape.root = root_of(step, n);
    shape.op = op_for(shape.op.kind, shape.dtype, me);
    CallSetup setup = setup_call(*comm, shape);
    OpDesc call;
    call.kind = shape.kind;
    call.count = shape.count;
    call.dtype = shape.dtype;
    call.root = shape.root;
    setup.fill_input(
        make_input(shape.dtype, shape.op.kind, world.rank(), setup.input_elements, step.salt));
    if (step.in_group) comm->group_start();
    Work w = issue_call(*comm, setup, CallOptions{step.async_op, {}});
    if (step.in_group) w = comm->group_end({.async_op = step.async_op});
    w.wait();
    results.push_back(setup.result_bytes());
  }
  return results;
}

}  // namespace

TEST_CASE("random programs give the sequential reference's bytes", "[emu][random]") {
  std::size_t programs = env_count("TWINCCL_RANDOM_PROGRAMS", 2000);
  auto first_seed = static_cast<unsigned>(env_count("TWINCCL_RANDOM_SEED", 1));
  std::size_t ops_run = 0;
  for (unsigned seed = first_seed; seed < first_seed + programs; ++seed) {
    Program p = make_program(seed);
    auto want = reference(p);
    std::vector<std::vector<Bytes>> got(static_cast<std::size_t>(p.nranks));
    std::string error;
    emu::EmulatorOptions options;
    options.world_size = p.nranks;
    options.schedule_path = p.schedule_path;
    options.timeout_s = 30.0;
    // Mostly checks on; every fourth program off, every fourth debug (poisoned async outputs).
    options.check = seed % 4 == 0   ? CheckLevel::off
                    : seed % 4 == 1 ? CheckLevel::debug
                                    : CheckLevel::on;
    try {
      emu::run_world(options, [&](Communicator& c) {
        got[static_cast<std::size_t>(c.rank())] = run_rank(c, p);
      });
    } catch (const std::exception& e) {
      error = e.what();
    }
    INFO(error);
    INFO("seed " << seed << " (TWINCCL_RANDOM_SEED=" << seed
                 << " TWINCCL_RANDOM_PROGRAMS=1 replays it), " << p.nranks
                 << " ranks, schedule path " << p.schedule_path << ", check level "
                 << static_cast<int>(options.check));
    REQUIRE(error.empty());
    for (std::size_t s = 0; s < p.steps.size(); ++s) {
      for (int r = 0; r < p.nranks; ++r) {
        const Step& step = p.steps[s];
        INFO("step " << s << ": "
                     << (step.p2p ? std::string("send/recv") : std::string(name(step.shape.kind)))
                     << " " << name(step.shape.dtype) << " op " << name(step.shape.op.kind)
                     << " count " << step.shape.count << " colors " << step.colors << " in_place "
                     << step.shape.in_place << ", rank " << r);
        REQUIRE(got[static_cast<std::size_t>(r)][s] == want[s][static_cast<std::size_t>(r)]);
        ++ops_run;
      }
    }
  }
  CHECK(ops_run > programs);
}
