// How long the emulator takes to report a deadlock at scale, and how long the message is.
// Not a test: run it by hand, e.g. `nice build/bench/bench_emu_deadlock_scale send_ring 4096`.
//
// Shapes (every one a real deadlock, blocking calls on one stream per communicator):
//   send_ring: every rank send(next) then recv(prev) (NCCL's order, no group);
//   recv_ring: every rank recv(prev) then send(next);
//   missing:   ranks 0..n-2 all_reduce, rank n-1 waits in recv from rank 0 instead;
//   work_wait: every rank irecv(prev), waits on it, then sends (never reached);
//   busy:      rank n-1 sleeps past the timeout before the all_reduce (TimeoutError expected).
// Prints the seconds until run_world threw, when the first and the last rank's function ended
// (threads' start and teardown are the rest), the error type and the message's length and start.
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "twinccl/emu/emulator.h"
#include "twinccl/errors.h"

using namespace twinccl;

int main(int argc, char** argv) {
  if (argc < 3) {
    fmt::print(
        stderr,
        "usage: {} send_ring|recv_ring|missing|work_wait|busy RANKS [TIMEOUT_S [check_off]]\n",
        argv[0]);
    return 2;
  }
  const std::string shape = argv[1];
  emu::EmulatorOptions o;
  o.world_size = std::atoi(argv[2]);
  o.timeout_s = argc > 3 ? std::atof(argv[3]) : 600.0;
  if (argc > 4 && std::string(argv[4]) == "check_off") o.check = CheckLevel::off;
  auto start = std::chrono::steady_clock::now();
  std::string type = "none", message;
  std::atomic<double> first_end_s{1e300}, last_end_s{0}, last_issue_s{0};
  try {
    emu::run_world(o, [&](Communicator& c) {
      struct Stamp {  // when this rank's function ended (by an error, always here)
        std::atomic<double>& first;
        std::atomic<double>& last;
        std::chrono::steady_clock::time_point start;
        ~Stamp() {
          double t =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          double f = first.load();
          while (t < f && !first.compare_exchange_weak(f, t)) {
          }
          double l = last.load();
          while (t > l && !last.compare_exchange_weak(l, t)) {
          }
        }
      } stamp{first_end_s, last_end_s, start};
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
      } else if (shape == "busy") {  // not a cycle: the timeout must end it
        if (r == n - 1) std::this_thread::sleep_for(std::chrono::duration<double>(o.timeout_s + 2));
        c.all_reduce(&x, &x, 1, DataType::int32, ReduceOp::sum());
      } else if (shape == "work_wait") {
        CallOptions async;
        async.async_op = true;
        Work w = c.recv(&y, 1, DataType::int32, (r + n - 1) % n, async);
        double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        double l = last_issue_s.load();
        while (t > l && !last_issue_s.compare_exchange_weak(l, t)) {
        }
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
  if (shape == "work_wait")
    fmt::print("the last rank issued its recv at {:.2f} s\n", last_issue_s.load());
  fmt::print(
      "{} {} ranks: {:.2f} s, first rank ended at {:.2f} s, last at {:.2f} s, {}, message {} "
      "bytes: {}\n",
      shape, o.world_size, seconds, first_end_s.load(), last_end_s.load(), type, message.size(),
      message.substr(0, 400));
  return 0;
}
