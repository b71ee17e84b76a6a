// Reading torchrun / Open MPI / Slurm launcher variables (no GPU, no network: pure parsing).
#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "twinccl/errors.h"
#include "twinccl/launch_environment.h"

using twinccl::LaunchEnvironment;
using twinccl::Launcher;

namespace {

using Vars = std::map<std::string, std::string, std::less<>>;

LaunchEnvironment read(const Vars& vars) {
  return twinccl::read_launch_environment([&](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  });
}

std::string config_error(const Vars& vars) {
  try {
    read(vars);
  } catch (const twinccl::ConfigError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("launch env: nothing set is one process on loopback", "[launch_env]") {
  auto env = read({});
  CHECK(env.launcher == Launcher::none);
  CHECK(env.rank == 0);
  CHECK(env.world_size == 1);
  CHECK(env.local_rank == 0);
  CHECK(env.master_addr == "127.0.0.1");
  CHECK(env.master_port == 29500);
  CHECK(env.store_bind_addr == "127.0.0.1");
}

TEST_CASE("launch env: torchrun", "[launch_env]") {
  auto env = read({{"RANK", "5"},
                   {"WORLD_SIZE", "16"},
                   {"LOCAL_RANK", "1"},
                   {"LOCAL_WORLD_SIZE", "4"},
                   {"MASTER_ADDR", "node17"},
                   {"MASTER_PORT", "29411"}});
  CHECK(env.launcher == Launcher::torchrun);
  CHECK(env.rank == 5);
  CHECK(env.world_size == 16);
  CHECK(env.local_rank == 1);
  CHECK(env.local_world_size == 4);
  CHECK(env.master_addr == "node17");
  CHECK(env.master_port == 29411);
  CHECK(env.store_bind_addr == "0.0.0.0");  // other nodes must reach rank 0
  auto single_node = read({{"RANK", "2"}, {"WORLD_SIZE", "3"}});
  CHECK(single_node.local_rank == 2);
  CHECK(single_node.local_world_size == 3);
  CHECK(single_node.master_addr == "127.0.0.1");
  CHECK(single_node.store_bind_addr == "127.0.0.1");
  auto bound = read({{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"TWINCCL_STORE_BIND", "10.1.2.3"}});
  CHECK(bound.store_bind_addr == "10.1.2.3");
}

TEST_CASE("launch env: torchrun malformed values name the variable", "[launch_env]") {
  CHECK_THAT(config_error({{"RANK", "abc"}, {"WORLD_SIZE", "4"}}), Catch::Contains("RANK='abc'"));
  CHECK_THAT(config_error({{"RANK", "1x"}, {"WORLD_SIZE", "4"}}), Catch::Contains("RANK='1x'"));
  CHECK_THAT(config_error({{"RANK", ""}, {"WORLD_SIZE", "4"}}), Catch::Contains("RANK=''"));
  CHECK_THAT(config_error({{"RANK", "4"}, {"WORLD_SIZE", "4"}}),
             Catch::Contains("RANK=4 is out of range [0, 3]"));
  CHECK_THAT(config_error({{"RANK", "-1"}, {"WORLD_SIZE", "4"}}), Catch::Contains("RANK=-1"));
  CHECK_THAT(config_error({{"RANK", "0"}, {"WORLD_SIZE", "0"}}), Catch::Contains("WORLD_SIZE=0"));
  CHECK_THAT(config_error({{"RANK", "0"}, {"WORLD_SIZE", "99999999999"}}),
             Catch::Contains("WORLD_SIZE"));
  CHECK_THAT(config_error({{"RANK", "0"}}), Catch::Contains("WORLD_SIZE is not set"));
  CHECK_THAT(config_error({{"WORLD_SIZE", "2"}}), Catch::Contains("RANK is not set"));
  CHECK_THAT(config_error({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "70000"}}),
             Catch::Contains("MASTER_PORT=70000"));
  CHECK_THAT(config_error({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "http"}}),
             Catch::Contains("MASTER_PORT='http'"));
  CHECK_THAT(
      config_error(
          {{"RANK", "0"}, {"WORLD_SIZE", "8"}, {"LOCAL_RANK", "4"}, {"LOCAL_WORLD_SIZE", "4"}}),
      Catch::Contains("LOCAL_RANK=4"));
  CHECK_THAT(config_error({{"RANK", "0"}, {"WORLD_SIZE", "8"}, {"LOCAL_WORLD_SIZE", "4"}}),
             Catch::Contains("MASTER_ADDR is not set"));
}

TEST_CASE("launch env: Open MPI", "[launch_env]") {
  auto env = read({{"OMPI_COMM_WORLD_RANK", "3"},
                   {"OMPI_COMM_WORLD_SIZE", "4"},
                   {"OMPI_COMM_WORLD_LOCAL_RANK", "3"},
                   {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"}});
  CHECK(env.launcher == Launcher::open_mpi);
  CHECK(env.rank == 3);
  CHECK(env.world_size == 4);
  CHECK(env.local_rank == 3);
  CHECK(env.master_addr == "127.0.0.1");
  // mpirun inside a Slurm allocation: the MPI variables win over stale SLURM_* ones.
  auto mixed = read({{"OMPI_COMM_WORLD_RANK", "1"},
                     {"OMPI_COMM_WORLD_SIZE", "2"},
                     {"SLURM_PROCID", "0"},
                     {"SLURM_NTASKS", "1"}});
  CHECK(mixed.launcher == Launcher::open_mpi);
  CHECK(mixed.rank == 1);
  CHECK_THAT(config_error({{"OMPI_COMM_WORLD_RANK", "one"}, {"OMPI_COMM_WORLD_SIZE", "2"}}),
             Catch::Contains("OMPI_COMM_WORLD_RANK='one'"));
  CHECK_THAT(config_error({{"OMPI_COMM_WORLD_RANK", "0"},
                           {"OMPI_COMM_WORLD_SIZE", "16"},
                           {"OMPI_COMM_WORLD_LOCAL_SIZE", "8"}}),
             Catch::Contains("MASTER_ADDR"));
}

TEST_CASE("launch env: Slurm master from the node list", "[launch_env]") {
  auto env = read({{"SLURM_PROCID", "9"},
                   {"SLURM_NTASKS", "16"},
                   {"SLURM_LOCALID", "1"},
                   {"SLURM_NTASKS_PER_NODE", "8"},
                   {"SLURM_STEP_NODELIST", "gpu[007-008]"},
                   {"SLURM_NODELIST", "other[1-9]"}});
  CHECK(env.launcher == Launcher::slurm);
  CHECK(env.rank == 9);
  CHECK(env.world_size == 16);
  CHECK(env.local_rank == 1);
  CHECK(env.local_world_size == 8);
  CHECK(env.master_addr == "gpu007");  // the step's list wins over the job's
  CHECK(env.store_bind_addr == "0.0.0.0");
  auto by_addr = read({{"SLURM_PROCID", "0"},
                       {"SLURM_NTASKS", "2"},
                       {"SLURM_NODELIST", "a[1-2]"},
                       {"MASTER_ADDR", "10.0.0.1"},
                       {"MASTER_PORT", "1234"}});
  CHECK(by_addr.master_addr == "10.0.0.1");
  CHECK(by_addr.master_port == 1234);
  auto tasks = read({{"SLURM_PROCID", "5"},
                     {"SLURM_NTASKS", "7"},
                     {"SLURM_LOCALID", "0"},
                     {"SLURM_NODEID", "2"},
                     {"SLURM_TASKS_PER_NODE", "2(x2),3"},
                     {"SLURM_NODELIST", "n[1-3]"}});
  CHECK(tasks.local_world_size == 3);
  CHECK_THAT(config_error({{"SLURM_PROCID", "0"},
                           {"SLURM_NTASKS", "2"},
                           {"SLURM_TASKS_PER_NODE", "2(y2)"},
                           {"SLURM_NODELIST", "n1"}}),
             Catch::Contains("SLURM_TASKS_PER_NODE='2(y2)'"));
  CHECK_THAT(config_error({{"SLURM_PROCID", "x"}, {"SLURM_NTASKS", "2"}, {"SLURM_NODELIST", "n1"}}),
             Catch::Contains("SLURM_PROCID='x'"));
  CHECK_THAT(config_error({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}}),
             Catch::Contains("MASTER_ADDR"));
  CHECK_THAT(
      config_error({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "2"}, {"SLURM_NODELIST", "node[01-"}}),
      Catch::Contains("SLURM_NODELIST='node[01-'"));
}

TEST_CASE("launch env: first host of a Slurm node list", "[launch_env]") {
  using twinccl::first_slurm_host;
  CHECK(first_slurm_host("node07", "V") == "node07");
  CHECK(first_slurm_host("node[03-05,9]", "V") == "node03");
  CHECK(first_slurm_host("node[9,3-5]", "V") == "node9");
  CHECK(first_slurm_host("n1,n2", "V") == "n1");
  CHECK(first_slurm_host("rack[1-2]-node[01-04]", "V") == "rack1-node01");
  CHECK(first_slurm_host("gpu[001-004]-ib,login1", "V") == "gpu001-ib");
  for (const char* bad : {"", "[1-2]x", "node[", "node]1", "node[]", "node[a-b]", ",n1"}) {
    INFO(bad);
    if (std::string(bad) == "[1-2]x") {
      CHECK(first_slurm_host(bad, "V") == "1x");  // a list may start with a range
      continue;
    }
    CHECK_THROWS_AS(first_slurm_host(bad, "SLURM_NODELIST"), twinccl::ConfigError);
  }
}

TEST_CASE("launch env: torchrun's agent store, run id and restart attempt", "[launch_env]") {
  Vars vars = {{"RANK", "1"},
               {"WORLD_SIZE", "2"},
               {"MASTER_PORT", "29400"},
               {"TORCHELASTIC_USE_AGENT_STORE", "True"},
               {"TORCHELASTIC_RUN_ID", "job-42"},
               {"TORCHELASTIC_RESTART_COUNT", "3"}};
  auto env = read(vars);
  CHECK(env.agent_store);
  CHECK(env.job_key == "torchrun/job-42/attempt_3");
  CHECK(env.master_port_origin == "MASTER_PORT");
  vars["TORCHELASTIC_USE_AGENT_STORE"] = "False";  // c10d with TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1
  CHECK_FALSE(read(vars).agent_store);
  vars["TORCHELASTIC_RUN_ID"] = std::string(500, 'x') + "/../";  // long or odd ids are hashed
  const auto hashed = read(vars).job_key;
  CHECK(hashed.size() < 60);
  CHECK(hashed.find('/', 9) == hashed.rfind('/'));
  CHECK_THAT(
      config_error({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"TORCHELASTIC_USE_AGENT_STORE", "True"}}),
      Catch::Contains("MASTER_PORT is not set"));
  CHECK_THAT(
      config_error({{"RANK", "0"}, {"WORLD_SIZE", "1"}, {"TORCHELASTIC_RESTART_COUNT", "x"}}),
      Catch::Contains("TORCHELASTIC_RESTART_COUNT='x'"));
}

TEST_CASE("launch env: Slurm and Open MPI derive the store port from the job id", "[launch_env]") {
  Vars slurm = {{"SLURM_PROCID", "0"},
                {"SLURM_NTASKS", "2"},
                {"SLURM_NODELIST", "n1"},
                {"SLURM_JOB_ID", "812"},
                {"SLURM_STEP_ID", "1"}};
  auto env = read(slurm);
  CHECK(env.master_port == 15000 + 812 * 16 + 1);
  CHECK(env.master_port == twinccl::derived_master_port(812, 1));
  CHECK(env.master_port_origin == "derived from SLURM_JOB_ID=812 SLURM_STEP_ID=1");
  CHECK(env.job_key == "slurm/812.1");
  slurm["SLURM_JOB_ID"] = "813";  // the next job on the same node
  CHECK(read(slurm).master_port != env.master_port);
  slurm["MASTER_PORT"] = "1234";  // an explicit port always wins
  CHECK(read(slurm).master_port == 1234);
  CHECK_THAT(config_error({{"SLURM_PROCID", "0"},
                           {"SLURM_NTASKS", "2"},
                           {"SLURM_NODELIST", "n1"},
                           {"SLURM_JOB_ID", "12a"}}),
             Catch::Contains("SLURM_JOB_ID='12a'"));
  for (std::uint64_t job : {0ull, 936ull, 937ull, 123456789ull}) {
    for (std::uint64_t step : {0ull, 15ull, 4294967294ull}) {
      const int port = twinccl::derived_master_port(job, step);
      CHECK(port >= 15000);
      CHECK(port < 30000);
    }
  }
  Vars ompi = {{"OMPI_COMM_WORLD_RANK", "0"},
               {"OMPI_COMM_WORLD_SIZE", "2"},
               {"OMPI_MCA_ess_base_jobid", "3470393345"}};
  CHECK(read(ompi).master_port == twinccl::derived_master_port(3470393345ull, 0));
  CHECK(read(ompi).job_key == "open_mpi/3470393345");
  Vars prrte = {{"OMPI_COMM_WORLD_RANK", "0"},
                {"OMPI_COMM_WORLD_SIZE", "2"},
                {"PMIX_NAMESPACE", "prterun-a-1@1"}};
  Vars prrte2 = prrte;
  prrte2["PMIX_NAMESPACE"] = "prterun-a-2@1";
  CHECK(read(prrte).job_key == "open_mpi/prterun-a-1@1");
  CHECK(read(prrte).master_port != read(prrte2).master_port);
  CHECK(read({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "2"}}).master_port == 29500);
}

TEST_CASE("launch env: a rank's GPU, and ranks that would share one", "[launch_env]") {
  using twinccl::choose_local_gpu;
  auto env = read({{"RANK", "5"},
                   {"WORLD_SIZE", "8"},
                   {"LOCAL_RANK", "1"},
                   {"LOCAL_WORLD_SIZE", "4"},
                   {"MASTER_ADDR", "n0"}});
  CHECK(choose_local_gpu(env, 4) == 1);
  CHECK(choose_local_gpu(env, 8) == 1);
  try {
    choose_local_gpu(env, 2);  // 4 local ranks, 2 GPUs: LOCAL_RANK % 2 would double up silently
    FAIL("ranks sharing a GPU were accepted");
  } catch (const twinccl::ConfigError& e) {
    CHECK_THAT(e.what(), Catch::Contains("local rank 1 of 4") && Catch::Contains("only 2 GPU(s)") &&
                             Catch::Contains("TWINCCL_ALLOW_SHARED_GPU=1"));
  }
  env.allow_shared_gpu = true;
  CHECK(choose_local_gpu(env, 2) == 1);
  auto bound = read({{"SLURM_PROCID", "3"},
                     {"SLURM_NTASKS", "4"},
                     {"SLURM_LOCALID", "3"},
                     {"SLURM_NTASKS_PER_NODE", "4"},
                     {"SLURM_NODELIST", "n1"},
                     {"SLURM_GPUS_PER_TASK", "1"}});
  CHECK(choose_local_gpu(bound, 1) == 0);  // srun --gpus-per-task=1: each task sees its own GPU
  CHECK_THROWS_AS(choose_local_gpu(bound, 0), twinccl::BackendError);
  CHECK(read({{"TWINCCL_ALLOW_SHARED_GPU", "1"}}).allow_shared_gpu);
  CHECK_THAT(config_error({{"TWINCCL_ALLOW_SHARED_GPU", "yes"}}),
             Catch::Contains("TWINCCL_ALLOW_SHARED_GPU='yes'"));
}
