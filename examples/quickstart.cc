// The README's program: all_reduce in place, an async all_gather, a split. Run it with
//   TWINCCL_BACKEND=emu TWINCCL_WORLD_SIZE=8 ./example_quickstart
#include <cstdio>
#include <stdexcept>
#include <vector>

#include "twinccl/run.h"

int main(int argc, char** argv) {
  return twinccl::run(argc, argv, [](twinccl::Communicator& world) {
    using namespace twinccl;
    Buffer x = world.alloc(1024, DataType::float32);  // host memory on emu, GPU memory on NCCL
    std::vector<float> mine(1024, float(world.rank() + 1));
    x.copy_from_host(mine.data(), x.bytes());
    world.all_reduce(x, x, ReduceOp::sum());  // in place, blocking

    Buffer all = world.alloc(1024 * static_cast<std::size_t>(world.size()), DataType::float32);
    Work w = world.all_gather(x, all, {.async_op = true});  // returns at once
    w.wait();                                               // rethrows a typed error, if any

    auto half = world.split(world.rank() % 2, world.rank());  // sub-communicators
    half->barrier();
    float n = static_cast<float>(world.size());
    if (x.to_host<float>()[0] != n * (n + 1) / 2)
      throw std::runtime_error("wrong all_reduce result");
    if (world.rank() == 0)
      std::printf("sum = %g (expected %g): OK\n", x.to_host<float>()[0], n * (n + 1) / 2);
  });
}
