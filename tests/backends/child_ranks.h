// Test support: run this test program again as one child process per rank, with the variables a
// launcher (torchrun, srun, mpirun) would give that rank and none of this process's own.
//   pid_t pid = start_child_rank("bootstrap child rank", {{"RANK", "0"}, ...}, {"X=1"});
//   wait_or_kill({pid}, std::chrono::seconds(30));
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace child_ranks {

using Env = std::map<std::string, std::string, std::less<>>;

// Starts /proc/self/exe running the Catch2 test case `child_test`, its output to /dev/null; its
// environment: this process's minus every launcher variable (RANK=, LOCAL_*, SLURM_*, OMPI_*,
// TWINCCL_* ...), then `rank_env`, then `extra` ("NAME=value" entries).
pid_t start_child_rank(const char* child_test, const Env& rank_env,
                       const std::vector<std::string>& extra);

// Whether `port` on 127.0.0.1 can be bound now (SO_REUSEADDR: a port in TIME_WAIT counts as free).
bool port_free(int port);

// A TCP port on 127.0.0.1 the system says is free now (bound to port 0, then released).
int free_port();

// Waits for every child; one still running after `limit` (counted from the call) is killed.
void wait_or_kill(const std::vector<pid_t>& pids, std::chrono::seconds limit);

}  // namespace child_ranks
