// The NCCL backend under each launcher, as processes, on the recording double: torchrun, mpirun
// (Open MPI) and srun give their variables (here: what each sets, two "nodes" of two ranks on this
// host), and every process must ask NCCL for the right communicator: rank = the launcher's rank,
// nranks = its world size, the GPU = its local rank, and the unique id made by rank 0's process
// and fetched from rank 0's store at the address the launcher's variables give. The double cannot
// join ranks of different processes, so with init_alone=1 it logs each init and fails it at once;
// this checks the mapping up to ncclCommInitRankConfig (scripts/gpu-multirank.sh runs it on a GPU).
#if defined(TWINCCL_NCCL_DOUBLE_PATH)

#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backends/child_ranks.h"
#include "twinccl/launch_environment.h"
#include "twinccl/run.h"

using Env = child_ranks::Env;

namespace {

constexpr int kWorld = 4;
constexpr int kPerNode = 2;

struct Started {
  pid_t pid;
  std::string log;  // the double's log of this process
};

// Starts this test program once per rank environment ("nccl launch child"), waits (30 s at most).
std::vector<Started> start_ranks(const std::vector<Env>& ranks, const std::string& tag) {
  std::vector<Started> out;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const std::string log = "/tmp/twinccl-launch-map-" + std::to_string(::getpid()) + "-" + tag +
                            "-" + std::to_string(r) + ".log";
    std::remove(log.c_str());
    const pid_t pid = child_ranks::start_child_rank(
        "nccl launch child", ranks[r],
        {"TWINCCL_BACKEND=nccl", "TWINCCL_DOUBLE_INIT_ALONE=1", "TWINCCL_DOUBLE_DEVICE_COUNT=2",
         "TWINCCL_TIMEOUT_S=20", "TWINCCL_TEST_LAUNCH_CHILD=1",
         std::string("TWINCCL_NCCL_LIBRARY=") + TWINCCL_NCCL_DOUBLE_PATH,
         std::string("TWINCCL_CUDART_LIBRARY=") + TWINCCL_NCCL_DOUBLE_PATH,
         "TWINCCL_DOUBLE_LOG_FILE=" + log});
    out.push_back({pid, log});
  }
  std::vector<pid_t> pids;
  for (const Started& s : out) pids.push_back(s.pid);
  child_ranks::wait_or_kill(pids, std::chrono::seconds(30));
  return out;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(path.c_str());
  return text.str();
}

// Every process asked for rank r of kWorld on GPU r % kPerNode, with rank 0's process's id.
void check_mapping(const std::vector<Started>& started) {
  REQUIRE(started.size() == static_cast<std::size_t>(kWorld));
  const std::string id = "id=" + std::to_string(started[0].pid) + ".";
  for (int r = 0; r < kWorld; ++r) {
    const std::string log = read_file(started[static_cast<std::size_t>(r)].log);
    INFO("rank " << r << " log: " << log.substr(0, 1500));
    const std::string want = "pid " + std::to_string(started[static_cast<std::size_t>(r)].pid) +
                             " ncclCommInitRankConfig rank=" + std::to_string(r) +
                             " nranks=" + std::to_string(kWorld) +
                             " device=" + std::to_string(r % kPerNode) + " " + id;
    CHECK(log.find(want) != std::string::npos);
  }
}

// A job number whose derived store port (launch_environment.cc) is free on this host.
template <class Make>
std::vector<Env> ranks_with_free_port(Make make) {
  std::mt19937_64 rng(std::random_device{}());
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::uint64_t job = 100'000 + rng() % 900'000;
    const Env first = make(0, job);
    const auto env = twinccl::read_launch_environment([&](std::string_view name) {
      auto it = first.find(name);
      return it == first.end() ? std::nullopt : std::optional<std::string>(it->second);
    });
    if (!child_ranks::port_free(env.master_port)) continue;
    std::vector<Env> ranks;
    for (int r = 0; r < kWorld; ++r) ranks.push_back(make(r, job));
    return ranks;
  }
  FAIL("no free derived port in 100 tries");
  return {};
}

}  // namespace

// The rank program: started by start_ranks() in a fresh process, hidden from normal test runs.
TEST_CASE("nccl launch child", "[.][nccl_launch_child]") {
  if (std::getenv("TWINCCL_TEST_LAUNCH_CHILD") == nullptr) return;
  try {
    twinccl::RunOptions o;
    o.backend = "nccl";
    twinccl::run(o, [](twinccl::Communicator&) {});
  } catch (const std::exception&) {
    // init_alone=1: the double refused the init after logging it; the log is what is checked.
  }
}

TEST_CASE("nccl launch mapping: srun's SLURM_* give rank, GPU, world size and store address",
          "[nccl_launch_mapping]") {
  check_mapping(start_ranks(ranks_with_free_port([](int r, std::uint64_t job) {
                              return Env{{"SLURM_PROCID", std::to_string(r)},
                                         {"SLURM_NTASKS", std::to_string(kWorld)},
                                         {"SLURM_LOCALID", std::to_string(r % kPerNode)},
                                         {"SLURM_NODEID", std::to_string(r / kPerNode)},
                                         {"SLURM_NTASKS_PER_NODE", std::to_string(kPerNode)},
                                         {"SLURM_TASKS_PER_NODE", "2(x2)"},
                                         {"SLURM_JOB_ID", std::to_string(job)},
                                         {"SLURM_STEP_ID", "0"},
                                         {"SLURM_NODELIST", "localhost"},
                                         {"SLURM_STEP_NODELIST", "localhost"}};
                            }),
                            "srun"));
}

TEST_CASE("nccl launch mapping: mpirun's OMPI_COMM_WORLD_* give rank, GPU, world size and store",
          "[nccl_launch_mapping]") {
  check_mapping(start_ranks(
      ranks_with_free_port([](int r, std::uint64_t job) {
        return Env{{"OMPI_COMM_WORLD_RANK", std::to_string(r)},
                   {"OMPI_COMM_WORLD_SIZE", std::to_string(kWorld)},
                   {"OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(r % kPerNode)},
                   {"OMPI_COMM_WORLD_LOCAL_SIZE", std::to_string(kPerNode)},
                   {"OMPI_COMM_WORLD_NODE_RANK", std::to_string(r / kPerNode)},
                   {"OMPI_MCA_ess_base_jobid", std::to_string(job << 16 | 1)},
                   // Open MPI names no rank-0 host: across nodes the user passes it (-x).
                   {"MASTER_ADDR", "127.0.0.1"}};
      }),
      "mpirun"));
}

TEST_CASE("nccl launch mapping: torchrun's RANK/LOCAL_RANK give rank, GPU, world size and store",
          "[nccl_launch_mapping]") {
  // c10d without a shared store (TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1): rank 0 serves MASTER_PORT.
  const auto port = std::to_string(child_ranks::free_port());
  std::vector<Env> ranks;
  for (int r = 0; r < kWorld; ++r) {
    ranks.push_back({{"RANK", std::to_string(r)},
                     {"WORLD_SIZE", std::to_string(kWorld)},
                     {"LOCAL_RANK", std::to_string(r % kPerNode)},
                     {"LOCAL_WORLD_SIZE", std::to_string(kPerNode)},
                     {"GROUP_RANK", std::to_string(r / kPerNode)},
                     {"MASTER_ADDR", "127.0.0.1"},
                     {"MASTER_PORT", port},
                     {"TORCHELASTIC_RUN_ID", "map"},
                     {"TORCHELASTIC_USE_AGENT_STORE", "False"},
                     {"TORCH_DISABLE_SHARE_RDZV_TCP_STORE", "1"}});
  }
  check_mapping(start_ranks(ranks, "torchrun"));
}

#endif  // TWINCCL_NCCL_DOUBLE_PATH
