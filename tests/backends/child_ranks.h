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

// Waits for every child; one still running after `limit` (counted from the call) is killed.
void wait_or_kill(const std::vector<pid_t>& pids, std::chrono::seconds limit);

}  // namespace child_ranks
