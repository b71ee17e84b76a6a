// Who launched this process and where rank 0's bootstrap store lives: torchrun, Slurm, Open MPI,
// or nobody (a single process). The one place the launcher environment is read.
//
//   twinccl::LaunchEnvironment env = twinccl::read_launch_environment();
//   if (env.rank == 0) serve_store(env.store_bind_addr, env.master_port);
//   connect_store(env.master_addr, env.master_port);
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace twinccl {

enum class Launcher : std::uint8_t {
  none,      // no launcher variables: one process (which may drive every local GPU)
  torchrun,  // RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT
  open_mpi,  // OMPI_COMM_WORLD_RANK/SIZE/LOCAL_RANK/LOCAL_SIZE (+ MASTER_ADDR/PORT)
  slurm,     // SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID (+ master from the node list)
};

std::string_view name(Launcher launcher);

inline constexpr int kDefaultMasterPort = 29500;

struct LaunchEnvironment {
  Launcher launcher = Launcher::none;
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  int local_world_size = 1;  // 0 when the launcher does not say
  std::string master_addr = "127.0.0.1";
  int master_port = kDefaultMasterPort;
  // Interface rank 0's store listens on: TWINCCL_STORE_BIND, else loopback when master_addr is
  // loopback, else every interface ("0.0.0.0") so that other nodes can reach it.
  std::string store_bind_addr = "127.0.0.1";
  // Where master_port came from, for error messages: "MASTER_PORT", "derived from
  // SLURM_JOB_ID=812 SLURM_STEP_ID=0", "default".
  std::string master_port_origin = "default";
  // torchrun's agent already serves a c10d TCPStore on master_addr:master_port
  // (TORCHELASTIC_USE_AGENT_STORE=True): every rank is a client of it, nobody listens.
  bool agent_store = false;
  // Names this job (and torchrun restart attempt) in store keys, so that runs never read each
  // other's values: "torchrun/<TORCHELASTIC_RUN_ID>/attempt_<n>", "slurm/<job>.<step>",
  // "open_mpi/<jobid>", "local".
  std::string job_key = "local";
  // TWINCCL_ALLOW_SHARED_GPU=1: more local ranks than visible GPUs is intended (see
  // choose_local_gpu).
  bool allow_shared_gpu = false;
  // The launcher gave each task its own GPU set (Slurm's SLURM_GPUS_PER_TASK).
  bool gpus_bound_per_task = false;
};

// Without MASTER_PORT, Slurm and Open MPI jobs derive their store port from the job id so that
// two jobs sharing a node do not collide: 15000 + (job % 937) * 16 + step % 16, in [15000, 29992).
int derived_master_port(std::uint64_t job_id, std::uint64_t step_id);

// The GPU a rank of this node drives: its local rank when every local rank has its own visible
// GPU; GPU 0 when the launcher bound one GPU per task; local_rank % visible_gpus only with
// allow_shared_gpu. Otherwise ConfigError naming the counts and the settings that fix it.
int choose_local_gpu(const LaunchEnvironment& env, int visible_gpus);

// Returns the value of an environment variable, nullopt when unset.
using EnvironmentLookup = std::function<std::optional<std::string>(std::string_view name)>;

// Precedence: torchrun (RANK and WORLD_SIZE set) > Open MPI (OMPI_COMM_WORLD_RANK) > Slurm
// (SLURM_PROCID; mpirun inside an allocation keeps stale SLURM_* values, so MPI wins) > none.
// Malformed or inconsistent values throw ConfigError naming the variable and its value.
LaunchEnvironment read_launch_environment(const EnvironmentLookup& lookup);
LaunchEnvironment read_launch_environment();  // the process environment

// First host of a Slurm node list in its simple forms: "node07", "node[03-05,9]",
// "a[1-2]-b[01-04]", "n1,n2" -> "node07", "node03", "a1-b01", "n1". Throws ConfigError naming
// `variable` when malformed.
std::string first_slurm_host(std::string_view nodelist, std::string_view variable);

}  // namespace twinccl
