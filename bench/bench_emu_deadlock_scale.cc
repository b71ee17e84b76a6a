// How long the emulator takes to report a deadlock at scale, and how long the message is.
// Not a test: run it by hand, e.g. `nice build/bench/bench_emu_deadlock_scale send_ring 4096`.
//
// Shapes (every one a real deadlock, blocking calls on one stream per communicator):
//   send_ring: every rank send(next) then recv(prev) (NCCL's order, no group);
//   recv_ring: every rank recv(prev) then send(next);
//   missing:   ranks 0..n-2 all_reduce, rank n-1 waits in recv from rank 0 instead;
//   work_wait: every rank irecv(prev), waits on it, then sends (never reached).
// Prints the seconds until run_world threw, the error type and the message's length and start.
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "twinccl/emu/emulator.h"
#include "twinccl/errors.h"

using namespace twinccl;

int main(int argc, char** argv) {
  if (argc < 3) {
    fmt::print(stderr, "usage: {} send_ring|recv_ring|missing|work_wait RANKS [TIMEOUT_S]\n",
               argv[0]);
    return 2;
  }
  const std::string shape = argv[1];
  emu::EmulatorOptions o;
  o.world_size = std::atoi(argv[2]);
  o.timeout_s = argc > 3 ? std::atof(argv[3]) : 600.0;
  auto start = std::chrono::steady_clock::now();
  std::string type = "none", message;
  try {
    emu::run_world(o, [&](Communicator& c) {
      const int n = c.size(), r = c.rank();
      int x = r, y = -1;
      if (shape == "send_ring") {
        c.send(&x, 1, DataType::int32, (r + 1) % n);
        c.recv(&y, 1, DataType::int32, (r + n - 1) % n);
      } else if (shape == "recv_ring") {
        c.recv(&y, 1, DataType::int32, (r + n - 1) % n);
        c.send(&x, 1, DataType::int32, (r + 1) % n);
      } else if (shape == "missing") {
        if (r == n - 1)
          c.recv(&y, 1, DataType::int32, 0);
        else
          c.all_reduce(&x, &x, 1, DataType::int32, ReduceOp::sum());
      } else if (shape == "work_wait") {
        CallOptions async;
        async.async_op = true;
        Work w = c.recv(&y, 1, DataType::int32, (r + n - 1) % n, async);
        w.wait();
        c.send(&x, 1, DataType::int32, (r + 1) % n);
      }
    });
  } catch (const DeadlockError& e) {
    type = "DeadlockError";
    message = e.what();
  } catch (const TimeoutError& e) {
    type = "TimeoutError";
    message = e.what();
  } catch (const Error& e) {
    type = "other Error";
    message = e.what();
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  fmt::print("{} {} ranks: {:.2f} s, {}, message {} bytes: {}\n", shape, o.world_size, seconds,
             type, message.size(), message.substr(0, 400));
  return 0;
}
