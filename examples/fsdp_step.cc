// An FSDP-like training step: every rank keeps a shard of each layer's parameters. Forward: the
// next layer's all_gather is issued asynchronously while this layer computes (prefetch).
// Backward: each layer's gradient is reduce_scattered asynchronously while the previous layer
// computes; the step waits for all of them at the end. Checks the gathered parameters and the
// reduced gradient shards, then prints the simulated time (how much communication overlapped
// compute) when TWINCCL_TOPOLOGY is set.
//
//   TWINCCL_WORLD_SIZE=8 TWINCCL_TOPOLOGY=dgx-h100 ./example_fsdp_step [trace.json]
#include <iostream>
#include <mutex>
#include <vector>

#include "simulated_time.h"

using namespace twinccl;

namespace {

constexpr int kLayers = 4;
constexpr std::size_t kShard = 1 << 16;  // parameters per rank per layer
constexpr double kLayerFlops = 4e11;     // forward of one layer; backward is twice that

float param(int layer, int rank, std::size_t i) {
  return static_cast<float>(layer * 7 + rank * 3 + static_cast<int>(i % 101));
}

}  // namespace

int main(int argc, char** argv) {
  std::mutex mu;
  long wrong = 0;
  const int rc = examples::run_with_simulated_time(argc, argv, [&](Communicator& c) {
    const int n = c.size();
    const std::size_t full = kShard * static_cast<std::size_t>(n);
    std::vector<Buffer> shard, gathered, grad_full, grad_shard;
    for (int l = 0; l < kLayers; ++l) {
      shard.push_back(c.alloc(kShard, DataType::float32));
      std::vector<float> s(kShard);
      for (std::size_t i = 0; i < kShard; ++i) s[i] = param(l, c.rank(), i);
      shard.back().fill_from_host<float>(s);
      gathered.push_back(c.alloc(full, DataType::float32));
      grad_full.push_back(c.alloc(full, DataType::float32));
      grad_shard.push_back(c.alloc(kShard, DataType::float32));
    }
    long bad = 0;
    // Forward with prefetch: layer l+1's all_gather runs while layer l computes.
    std::vector<Work> gather(kLayers);
    gather[0] = c.all_gather(shard[0], gathered[0], {.async_op = true});
    for (int l = 0; l < kLayers; ++l) {
      gather[static_cast<std::size_t>(l)].wait();
      if (l + 1 < kLayers)
        gather[static_cast<std::size_t>(l + 1)] =
            c.all_gather(shard[static_cast<std::size_t>(l + 1)],
                         gathered[static_cast<std::size_t>(l + 1)], {.async_op = true});
      c.compute_flops(kLayerFlops);
      const auto g = gathered[static_cast<std::size_t>(l)].to_host<float>();
      for (std::size_t j = 0; j < full; ++j)
        bad += g[j] != param(l, static_cast<int>(j / kShard), j % kShard);
    }
    // Backward: layer l's gradient (rank r contributes (r+1) x the parameters) is reduce_scattered
    // while layer l-1 computes.
    std::vector<Work> reduce;
    for (int l = kLayers - 1; l >= 0; --l) {
      c.compute_flops(2 * kLayerFlops);
      std::vector<float> g = gathered[static_cast<std::size_t>(l)].to_host<float>();
      for (float& x : g) x *= static_cast<float>(c.rank() + 1);
      grad_full[static_cast<std::size_t>(l)].fill_from_host<float>(g);
      reduce.push_back(c.reduce_scatter(grad_full[static_cast<std::size_t>(l)],
                                        grad_shard[static_cast<std::size_t>(l)], ReduceOp::sum(),
                                        {.async_op = true}));
    }
    for (Work& w : reduce) w.wait();
    const float ranks_sum = static_cast<float>(n * (n + 1) / 2);
    for (int l = 0; l < kLayers; ++l) {
      const auto s = grad_shard[static_cast<std::size_t>(l)].to_host<float>();
      for (std::size_t i = 0; i < kShard; ++i) bad += s[i] != ranks_sum * param(l, c.rank(), i);
    }
    std::lock_guard<std::mutex> lock(mu);
    wrong += bad;
  });
  if (rc != 0) return rc;
  std::cout << "semantic check: gathered parameters and reduce_scattered gradients, " << wrong
            << " wrong values" << (wrong == 0 ? " (OK)\n" : " (WRONG)\n");
  return wrong == 0 ? 0 : 1;
}
