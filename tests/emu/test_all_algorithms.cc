// Every registered algorithm, executed by the emulator on real bytes (the schedule path with its
// parameters: channels, pipelining chunk, ranks per node), against the reference model: integer
// data for every algorithm (any fold order is exact), float data bit for bit for the algorithms
// that fold in the ring's order.
#include <catch2/catch.hpp>
#include <set>

#include "conformance_cases.h"
#include "twinccl/algorithms.h"
#include "twinccl/emu/emulator.h"

using namespace twinccl;
using namespace twinccl::testing;

namespace {

const std::set<std::string> kRingOrder{"ring", "direct", "nvls"};
const OpKind kEven[] = {OpKind::all_reduce, OpKind::reduce_scatter, OpKind::all_gather,
                        OpKind::broadcast,  OpKind::reduce,         OpKind::all_to_all,
                        OpKind::gather,     OpKind::scatter};

struct Params {
  int channels;
  std::size_t chunk;
  int ranks_per_node;
};

void run_algorithm(const Algorithm& algo, int n, const Params& p) {
  AlgorithmParams params{p.channels, p.chunk, p.ranks_per_node};
  std::vector<Case> cases;
  std::vector<std::string> names;
  unsigned salt = 11;
  for (OpKind kind : kEven) {
    bool serves = false;
    for (OpKind k : algo.collectives()) serves |= k == kind;
    if (!serves) continue;
    for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{29}, std::size_t{1000}}) {
      CollectiveSpec spec;
      spec.kind = kind;
      spec.nranks = n;
      spec.count = count;
      spec.root = n - 1;
      if (!algo.why_not(spec, params).empty()) continue;
      for (bool in_place : {false, true}) {
        const ReduceKind ops[] = {ReduceKind::sum, ReduceKind::max, ReduceKind::prod,
                                  ReduceKind::avg};
        for (ReduceKind op : ops) {
          if (!is_reducing(kind) && op != ReduceKind::sum) continue;
          cases.push_back(make_case(kind, DataType::int32, op, count, n - 1, in_place, n, salt++));
          if (kRingOrder.count(std::string(algo.name()))) {
            cases.push_back(
                make_case(kind, DataType::float32, op, count, n - 1, in_place, n, salt++));
            cases.push_back(
                make_case(kind, DataType::bfloat16, op, count, n - 1, in_place, n, salt++));
          }
        }
      }
    }
  }
  if (cases.empty()) return;
  emu::EmulatorOptions o;
  o.world_size = n;
  o.schedule_path = true;
  o.channels = p.channels;
  o.chunk_elements = p.chunk;
  o.ranks_per_node = p.ranks_per_node;
  o.timeout_s = 60;
  std::string where = std::string(algo.name()) + " on " + std::to_string(n) + " ranks, channels " +
                      std::to_string(p.channels) + ", chunk " + std::to_string(p.chunk) +
                      ", ranks_per_node " + std::to_string(p.ranks_per_node);
  INFO(where << ", " << cases.size() << " calls");
  REQUIRE_NOTHROW(emu::run_world(o, [&](Communicator& comm) {
    for (const Case& c : cases) run_case(comm, c, algo.name());
  }));
}

}  // namespace

TEST_CASE("every algorithm runs correctly on the emulator", "[emu][conformance][algorithms]") {
  int n = GENERATE(1, 2, 3, 4, 7, 8, 16);
  for (const Algorithm* algo : all_algorithms()) {
    run_algorithm(*algo, n, {1, 0, 0});
    run_algorithm(*algo, n, {3, 7, n % 2 == 0 ? 2 : 1});
    if (n % 4 == 0) run_algorithm(*algo, n, {2, 0, 4});
  }
}
