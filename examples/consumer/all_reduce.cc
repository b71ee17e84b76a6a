// all_reduce on 4 emulated ranks (TWINCCL_BACKEND=emu TWINCCL_WORLD_SIZE=4, the defaults of this
// program): rank r contributes r+1 in every element; every rank checks the sum 1+2+...+n.
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "twinccl/run.h"

int main(int argc, char** argv) {
  setenv("TWINCCL_WORLD_SIZE", "4", /*overwrite=*/0);
  return twinccl::run(argc, argv, [](twinccl::Communicator& world) {
    using namespace twinccl;
    Buffer x = world.alloc(1000, DataType::float32);
    std::vector<float> mine(1000, static_cast<float>(world.rank() + 1));
    x.copy_from_host(mine.data(), x.bytes());
    world.all_reduce(x, x, ReduceOp::sum());
    const float n = static_cast<float>(world.size());
    for (float v : x.to_host<float>()) {
      if (v != n * (n + 1) / 2)
        throw std::runtime_error("rank " + std::to_string(world.rank()) + ": got " +
                                 std::to_string(v));
    }
    if (world.rank() == 0)
      std::printf("all_reduce on %d ranks: %g everywhere, OK\n", world.size(), n * (n + 1) / 2);
  });
}
