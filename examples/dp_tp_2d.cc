// A 2D tensor-parallel x data-parallel step with split communicators: the world is split into
// tensor-parallel groups of consecutive ranks (one node each when the world spans two nodes) and
// data-parallel groups across them. Each layer all_gathers activations and reduce_scatters them
// on 'tp'; the data-parallel gradient all_reduce on 'dp' overlaps the next layer's compute.
// Checks every result, then prints the simulated time when TWINCCL_TOPOLOGY is set.
//
//   TWINCCL_WORLD_SIZE=16 TWINCCL_TOPOLOGY=h100-cluster-2 ./example_dp_tp_2d [trace.json]
//   (8 ranks: tp groups of 4; 16 ranks on h100-cluster-2: tp = one node of 8, dp across nodes)
#include <iostream>
#include <mutex>
#include <vector>

#include "simulated_time.h"

using namespace twinccl;

namespace {

constexpr int kLayers = 3;
constexpr std::size_t kActivations = 1 << 15;  // per tp rank
constexpr std::size_t kGradients = 1 << 20;    // per layer

}  // namespace

int main(int argc, char** argv) {
  std::mutex mu;
  long wrong = 0;
  const int rc = examples::run_with_simulated_time(argc, argv, [&](Communicator& world) {
    const int n = world.size();
    const int tp_size = n >= 16 ? 8 : std::max(1, n / 2);
    auto tp = world.split(world.rank() / tp_size, world.rank(), "tp");
    auto dp = world.split(world.rank() % tp_size, world.rank(), "dp");
    long bad = 0;
    std::vector<Work> grad_reduce;
    std::vector<Buffer> grads;
    for (int l = 0; l < kLayers; ++l) {
      Buffer act = tp->alloc(kActivations, DataType::float32);
      act.fill_from_host<float>(
          std::vector<float>(kActivations, static_cast<float>(tp->rank() + l)));
      Buffer all =
          tp->alloc(kActivations * static_cast<std::size_t>(tp->size()), DataType::float32);
      tp->all_gather(act, all);
      world.compute(150e-6);
      const auto g = all.to_host<float>();
      for (std::size_t j = 0; j < g.size(); ++j)
        bad += g[j] != static_cast<float>(static_cast<int>(j / kActivations) + l);
      tp->reduce_scatter(all, act, ReduceOp::sum());
      const int t = tp->size();
      // Every tp rank holds the same gathered tensor: the sum of its slice is t x that slice.
      const auto a = act.to_host<float>();
      for (std::size_t i = 0; i < kActivations; ++i)
        bad += a[i] != static_cast<float>(t * (tp->rank() + l));
      grads.push_back(dp->alloc(kGradients, DataType::float32));
      grads.back().fill_from_host<float>(
          std::vector<float>(kGradients, static_cast<float>(dp->rank() + 1)));
      grad_reduce.push_back(
          dp->all_reduce(grads.back(), grads.back(), ReduceOp::sum(), {.async_op = true}));
    }
    for (Work& w : grad_reduce) w.wait();
    const int d = dp->size();
    for (const Buffer& b : grads) {
      for (float v : b.to_host<float>()) bad += v != static_cast<float>(d * (d + 1) / 2);
    }
    std::lock_guard<std::mutex> lock(mu);
    wrong += bad;
  });
  if (rc != 0) return rc;
  std::cout << "semantic check: tp all_gather/reduce_scatter and dp all_reduce results, " << wrong
            << " wrong values" << (wrong == 0 ? " (OK)\n" : " (WRONG)\n");
  return wrong == 0 ? 0 : 1;
}
