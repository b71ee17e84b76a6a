// The unique-id exchange end to end under each launcher's environment, up to where a GPU is
// needed: real processes (this test program run again as "bootstrap child rank") get exactly
// the variables torchrun (static and c10d), srun or mpirun would give, exchange an id made by
// an injected generator (no CUDA) twice, and every rank must report the same bytes per run.
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
#include "backends/test_bootstrap_agent_store.h"
#include "twinccl/bootstrap.h"
#include "twinccl/errors.h"
#include "twinccl/launch_environment.h"

using namespace std::chrono_literals;
using Env = child_ranks::Env;

namespace {

constexpr std::size_t kIdBytes = 128;  // sizeof(ncclUniqueId)

std::string hex(const std::string& bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) out += {digits[c >> 4], digits[c & 15]};
  return out;
}

struct RankReport {
  std::string line;  // "ok <id of run 1> <id of run 2>" or "error <what>"
};

// Starts one process per rank environment and returns each one's report (30 s at most).
std::vector<RankReport> run_ranks(const std::vector<Env>& ranks) {
  static int batch = 0;
  ++batch;
  std::vector<pid_t> pids;
  std::vector<std::string> outputs;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    outputs.push_back("/tmp/twinccl-bootstrap-" + std::to_string(::getpid()) + "-" +
                      std::to_string(batch) + "-" + std::to_string(r));
    pids.push_back(child_ranks::start_child_rank("bootstrap child rank", ranks[r],
                                                 {"TWINCCL_TEST_BOOTSTRAP_OUT=" + outputs.back()}));
  }
  child_ranks::wait_or_kill(pids, 30s);
  std::vector<RankReport> reports;
  for (const auto& path : outputs) {
    std::ifstream in(path);
    RankReport report;
    std::getline(in, report.line);
    if (report.line.empty()) report.line = "error: no report (crashed or killed after 30 s)";
    reports.push_back(report);
    std::remove(path.c_str());
  }
  return reports;
}

// Every rank reports ok, the same id per run, and the two runs differ.
void check_agreement(const std::vector<RankReport>& reports) {
  REQUIRE(!reports.empty());
  for (std::size_t r = 0; r < reports.size(); ++r) {
    INFO("rank " << r << ": " << reports[r].line.substr(0, 600));
    REQUIRE(reports[r].line.rfind("ok ", 0) == 0);
    CHECK(reports[r].line == reports[0].line);
  }
  std::istringstream words(reports[0].line);
  std::string ok, first, second;
  words >> ok >> first >> second;
  CHECK(first.size() == 2 * kIdBytes);
  CHECK(second.size() == 2 * kIdBytes);
  CHECK(first != second);  // run 2 never reads run 1's id
}

twinccl::LaunchEnvironment read(const Env& vars) {
  return twinccl::read_launch_environment([&](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  });
}

// Rank environments made by `make(rank, job)`, for a job number whose derived port is free here.
template <class Make>
std::vector<Env> with_free_derived_port(int world, Make make, std::uint64_t* job_out = nullptr) {
  std::mt19937_64 rng(std::random_device{}());
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::uint64_t job = 100'000 + rng() % 900'000;
    if (!child_ranks::port_free(read(make(0, job)).master_port)) continue;
    std::vector<Env> ranks;
    for (int r = 0; r < world; ++r) ranks.push_back(make(r, job));
    if (job_out != nullptr) *job_out = job;
    return ranks;
  }
  FAIL("no free derived port found in 100 tries");
  return {};
}

Env torchrun(int rank, int world, int master_port, bool agent_store, const std::string& run_id,
             int attempt) {
  return {{"RANK", std::to_string(rank)},
          {"WORLD_SIZE", std::to_string(world)},
          {"LOCAL_RANK", std::to_string(rank)},
          {"LOCAL_WORLD_SIZE", std::to_string(world)},
          {"GROUP_RANK", "0"},
          {"ROLE_RANK", std::to_string(rank)},
          {"ROLE_NAME", "default"},
          {"ROLE_WORLD_SIZE", std::to_string(world)},
          {"MASTER_ADDR", "127.0.0.1"},
          {"MASTER_PORT", std::to_string(master_port)},
          {"TORCHELASTIC_RESTART_COUNT", std::to_string(attempt)},
          {"TORCHELASTIC_MAX_RESTARTS", "3"},
          {"TORCHELASTIC_RUN_ID", run_id},
          {"TORCHELASTIC_USE_AGENT_STORE", agent_store ? "True" : "False"},
          {"TORCH_NCCL_ASYNC_ERROR_HANDLING", "1"},
          {"OMP_NUM_THREADS", "1"}};
}

Env srun(int rank, int world, std::uint64_t job) {
  return {{"SLURM_PROCID", std::to_string(rank)},
          {"SLURM_NTASKS", std::to_string(world)},
          {"SLURM_LOCALID", std::to_string(rank)},
          {"SLURM_NODEID", "0"},
          {"SLURM_TASKS_PER_NODE", std::to_string(world)},
          {"SLURM_STEP_NUM_TASKS", std::to_string(world)},
          {"SLURM_JOB_ID", std::to_string(job)},
          {"SLURM_STEP_ID", "0"},
          {"SLURM_NODELIST", "localhost"},
          {"SLURM_STEP_NODELIST", "localhost"},
          {"SLURM_JOB_NUM_NODES", "1"}};
}

Env mpirun(int rank, int world, const Env& job_vars) {
  Env env = {{"OMPI_COMM_WORLD_RANK", std::to_string(rank)},
             {"OMPI_COMM_WORLD_SIZE", std::to_string(world)},
             {"OMPI_COMM_WORLD_LOCAL_RANK", std::to_string(rank)},
             {"OMPI_COMM_WORLD_LOCAL_SIZE", std::to_string(world)},
             {"OMPI_COMM_WORLD_NODE_RANK", "0"},
             {"OMPI_UNIVERSE_SIZE", std::to_string(world)}};
  env.insert(job_vars.begin(), job_vars.end());
  return env;
}

}  // namespace

// The rank program: run by run_ranks() in a fresh process, hidden from normal test runs.
TEST_CASE("bootstrap child rank", "[.][bootstrap_child]") {
  const char* out_path = std::getenv("TWINCCL_TEST_BOOTSTRAP_OUT");
  if (out_path == nullptr) return;
  std::ofstream out(out_path);
  try {
    const auto env = twinccl::read_launch_environment();
    std::mt19937_64 rng(std::random_device{}() ^ static_cast<std::uint64_t>(::getpid()));
    auto generate = [&] {
      std::string id(kIdBytes, '\0');
      for (auto& c : id) c = static_cast<char>(rng());
      return id;
    };
    const std::string first = twinccl::exchange_unique_id(env, kIdBytes, generate, 20s);
    const std::string second = twinccl::exchange_unique_id(env, kIdBytes, generate, 20s);
    out << "ok " << hex(first) << " " << hex(second) << "\n";
  } catch (const std::exception& e) {
    out << "error " << e.what() << "\n";
  }
}

TEST_CASE("bootstrap torchrun static: every rank is a client of the agent's store", "[bootstrap]") {
  twinccl::test::FakeAgentStore agent;  // holds MASTER_PORT, as torchrun's agent does
  std::vector<Env> ranks;
  for (int r = 0; r < 4; ++r) ranks.push_back(torchrun(r, 4, agent.port(), true, "none", 0));
  check_agreement(run_ranks(ranks));
  CHECK(agent.handshakes() >= 4);
  CHECK(agent.refused() == 0);
}

TEST_CASE("bootstrap torchrun c10d after a restart: the previous attempt's id is not read",
          "[bootstrap]") {
  twinccl::test::FakeAgentStore agent;
  const std::string stale(kIdBytes, 'S');
  agent.put("twinccl/torchrun/job7/attempt_0/nccl_id/1", stale);
  agent.put("twinccl/torchrun/job7/attempt_0/nccl_id/2", stale);
  std::vector<Env> ranks;
  for (int r = 0; r < 3; ++r) ranks.push_back(torchrun(r, 3, agent.port(), true, "job7", 1));
  const auto reports = run_ranks(ranks);
  check_agreement(reports);
  CHECK(reports[0].line.find(hex(stale)) == std::string::npos);
  CHECK(agent.value("twinccl/torchrun/job7/attempt_1/nccl_id/1").size() == kIdBytes);
}

TEST_CASE("bootstrap torchrun c10d without a shared store: rank 0 serves MASTER_PORT",
          "[bootstrap]") {
  // TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1: the agent picks a free MASTER_PORT and serves nothing.
  const int port = child_ranks::free_port();
  std::vector<Env> ranks;
  for (int r = 0; r < 3; ++r) {
    ranks.push_back(torchrun(r, 3, port, false, "job8", 0));
    ranks.back()["TORCH_DISABLE_SHARE_RDZV_TCP_STORE"] = "1";
  }
  check_agreement(run_ranks(ranks));
}

TEST_CASE("bootstrap srun: the store port comes from the job id", "[bootstrap]") {
  auto ranks = with_free_derived_port(4, [](int r, std::uint64_t job) { return srun(r, 4, job); });
  check_agreement(run_ranks(ranks));
}

TEST_CASE("bootstrap srun: two jobs on one node at once do not collide", "[bootstrap]") {
  std::uint64_t job_a = 0;
  auto a = with_free_derived_port(
      2, [](int r, std::uint64_t job) { return srun(r, 2, job); }, &job_a);
  std::vector<Env> b;
  for (int tries = 0; tries < 100 && b.empty(); ++tries) {
    auto candidate =
        with_free_derived_port(2, [](int r, std::uint64_t job) { return srun(r, 2, job); });
    if (read(candidate[0]).master_port != read(a[0]).master_port) b = candidate;
  }
  REQUIRE(!b.empty());
  std::vector<Env> both = a;
  both.insert(both.end(), b.begin(), b.end());
  const auto reports = run_ranks(both);
  check_agreement({reports[0], reports[1]});
  check_agreement({reports[2], reports[3]});
  CHECK(reports[0].line != reports[2].line);
}

TEST_CASE("bootstrap mpirun: Open MPI 4 job id and Open MPI 5 namespace", "[bootstrap]") {
  SECTION("OMPI_MCA_ess_base_jobid") {
    auto ranks = with_free_derived_port(3, [](int r, std::uint64_t job) {
      return mpirun(r, 3, {{"OMPI_MCA_ess_base_jobid", std::to_string(job << 16 | 1)}});
    });
    check_agreement(run_ranks(ranks));
  }
  SECTION("PMIX_NAMESPACE") {
    auto ranks = with_free_derived_port(3, [](int r, std::uint64_t job) {
      return mpirun(r, 3,
                    {{"PMIX_NAMESPACE", "prterun-node01-" + std::to_string(job) + "@1"},
                     {"PMIX_RANK", std::to_string(r)}});
    });
    check_agreement(run_ranks(ranks));
  }
}
