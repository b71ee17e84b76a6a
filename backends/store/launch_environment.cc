// Reading the launcher's environment (see launch_environment.h).
//
// How it works: pick the launcher by which variables exist, parse every integer strictly (the
// whole text, in range), then derive what the launcher leaves out: local rank/size default to a
// single node, the master address defaults to loopback only when every rank is on this node
// (otherwise it must come from MASTER_ADDR or, under Slurm, the first host of the node list).
// Then what the bootstrap needs to stay apart from other jobs: a store port derived from the job
// id when MASTER_PORT is not given, and a job key for store keys (torchrun's run id and restart
// attempt, Slurm's job.step, Open MPI's job id).
#include "twinccl/launch_environment.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <vector>

#include "twinccl/errors.h"

namespace twinccl {
namespace {

struct Reader {
  const EnvironmentLookup& lookup;
  std::string_view launcher;

  std::optional<std::string> text(std::string_view var) const { return lookup(var); }

  std::optional<int> integer(std::string_view var, int min, int max) const {
    auto value = lookup(var);
    if (!value) return std::nullopt;
    int parsed = 0;
    const char* begin = value->data();
    const char* end = begin + value->size();
    auto [ptr, ec] = std::from_chars(begin, end, parsed);
    if (value->empty() || ec != std::errc() || ptr != end) {
      throw ConfigError(std::string(var) + "='" + *value + "' is not an integer (" +
                        std::string(launcher) + " environment)");
    }
    if (parsed < min || parsed > max) {
      throw ConfigError(std::string(var) + "=" + *value + " is out of range [" +
                        std::to_string(min) + ", " + std::to_string(max) + "] (" +
                        std::string(launcher) + " environment)");
    }
    return parsed;
  }

  // A job or step id: a whole non-negative decimal number.
  std::optional<std::uint64_t> id(std::string_view var) const {
    auto value = lookup(var);
    if (!value) return std::nullopt;
    std::uint64_t parsed = 0;
    auto [ptr, ec] = std::from_chars(value->data(), value->data() + value->size(), parsed);
    if (value->empty() || ec != std::errc() || ptr != value->data() + value->size()) {
      throw ConfigError(std::string(var) + "='" + value->substr(0, 64) +
                        "' is not a job/step number (" + std::string(launcher) + " environment)");
    }
    return parsed;
  }

  bool flag(std::string_view var) const {
    auto value = lookup(var);
    if (!value || value->empty() || *value == "0") return false;
    if (*value == "1") return true;
    throw ConfigError(std::string(var) + "='" + value->substr(0, 64) + "' must be 0 or 1");
  }

  int required(std::string_view var, int min, int max, std::string_view because) const {
    auto v = integer(var, min, max);
    if (!v) {
      throw ConfigError(std::string(var) + " is not set but " + std::string(because) + " (" +
                        std::string(launcher) + " environment)");
    }
    return *v;
  }
};

constexpr int kMaxInt = std::numeric_limits<int>::max();

bool is_loopback(std::string_view host) {
  return host == "localhost" || host.starts_with("127.") || host == "::1";
}

// SLURM_TASKS_PER_NODE: "4", "2(x3),1" -> tasks on node `node_id`.
int slurm_tasks_on_node(const std::string& text, int node_id) {
  auto bad = [&](const std::string& why) {
    return ConfigError("SLURM_TASKS_PER_NODE='" + text + "' is malformed: " + why);
  };
  int node = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view entry(text.data() + pos, end - pos);
    int tasks = 0;
    int repeat = 1;
    auto [p, ec] = std::from_chars(entry.data(), entry.data() + entry.size(), tasks);
    if (ec != std::errc() || tasks <= 0)
      throw bad("entry '" + std::string(entry) + "' has no task count");
    std::string_view rest(p, static_cast<std::size_t>(entry.data() + entry.size() - p));
    if (!rest.empty()) {
      if (!rest.starts_with("(x") || !rest.ends_with(")"))
        throw bad("entry '" + std::string(entry) + "'");
      std::string_view digits = rest.substr(2, rest.size() - 3);
      auto [q, ec2] = std::from_chars(digits.data(), digits.data() + digits.size(), repeat);
      if (ec2 != std::errc() || q != digits.data() + digits.size() || repeat <= 0) {
        throw bad("entry '" + std::string(entry) + "' has a bad repeat count");
      }
    }
    if (node_id < node + repeat) return tasks;
    node += repeat;
    pos = end + 1;
  }
  throw bad("it lists " + std::to_string(node) + " nodes but SLURM_NODEID is " +
            std::to_string(node_id));
}

void check_local(LaunchEnvironment& env, std::string_view rank_var, std::string_view size_var) {
  if (env.local_world_size > 0 && env.local_rank >= env.local_world_size) {
    throw ConfigError(std::string(rank_var) + "=" + std::to_string(env.local_rank) +
                      " is not below " + std::string(size_var) + "=" +
                      std::to_string(env.local_world_size));
  }
}

// Master address from MASTER_ADDR, else `fallback`; loopback allowed only on a single node.
void resolve_master(LaunchEnvironment& env, const Reader& r, std::optional<std::string> fallback) {
  if (auto addr = r.text("MASTER_ADDR"); addr && !addr->empty()) {
    env.master_addr = *addr;
  } else if (fallback) {
    env.master_addr = *fallback;
  } else if (env.local_world_size != env.world_size) {
    throw ConfigError("MASTER_ADDR is not set and the " + std::to_string(env.world_size) +
                      " ranks are not all on this node (" + std::to_string(env.local_world_size) +
                      " local): set MASTER_ADDR to rank 0's host (" + std::string(r.launcher) +
                      " environment)");
  }
  if (auto port = r.integer("MASTER_PORT", 1, 65535)) {
    env.master_port = *port;
    env.master_port_origin = "MASTER_PORT";
  }
  if (auto bind = r.text("TWINCCL_STORE_BIND"); bind && !bind->empty()) {
    env.store_bind_addr = *bind;
  } else {
    env.store_bind_addr = env.master_addr == "::1"       ? "::1"
                          : is_loopback(env.master_addr) ? "127.0.0.1"
                                                         : "0.0.0.0";
  }
}

// torchrun and Open MPI name the same four numbers differently.
struct RankVariables {
  Launcher launcher;
  const char *size, *rank, *local_size, *local_rank;
};

LaunchEnvironment read_rank_variables(const Reader& r, const RankVariables& v) {
  LaunchEnvironment env;
  env.launcher = v.launcher;
  env.world_size = r.required(v.size, 1, kMaxInt, std::string(v.rank) + " is");
  env.rank = r.required(v.rank, 0, env.world_size - 1, std::string(v.size) + " is");
  env.local_world_size = r.integer(v.local_size, 1, env.world_size).value_or(env.world_size);
  env.local_rank = r.integer(v.local_rank, 0, kMaxInt).value_or(env.rank);
  check_local(env, v.local_rank, v.local_size);
  resolve_master(env, r, std::nullopt);
  return env;
}

// 64-bit FNV-1a: turns a long or textual job name into a number (ports) or a short key part.
std::uint64_t fnv1a(std::string_view text) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  return h;
}

// Store keys stay short and printable whatever a launcher puts in its ids.
std::string key_part(std::string_view text) {
  const bool plain = text.size() <= 64 && text.find_first_not_of(
                                              "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                              "0123456789._-@") == std::string_view::npos;
  if (plain && !text.empty()) return std::string(text);
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(fnv1a(text)));
  return std::string("h") + hex;
}

// Without MASTER_PORT, a port of the job's own (two jobs on one node must not share 29500).
void derive_port(LaunchEnvironment& env, std::uint64_t job, std::uint64_t step,
                 const std::string& origin) {
  if (env.master_port_origin == "MASTER_PORT") return;
  env.master_port = derived_master_port(job, step);
  env.master_port_origin = "derived from " + origin;
}

LaunchEnvironment read_torchrun(const Reader& r) {
  auto env = read_rank_variables(
      r, {Launcher::torchrun, "WORLD_SIZE", "RANK", "LOCAL_WORLD_SIZE", "LOCAL_RANK"});
  // torchrun writes Python's str(bool); accept the spellings a person would use too.
  const std::string use_agent = r.text("TORCHELASTIC_USE_AGENT_STORE").value_or("");
  env.agent_store = use_agent == "True" || use_agent == "true" || use_agent == "1";
  if (env.agent_store && env.master_port_origin != "MASTER_PORT") {
    throw ConfigError("TORCHELASTIC_USE_AGENT_STORE=" + use_agent +
                      " but MASTER_PORT is not set: cannot tell where torchrun's agent store is");
  }
  const int attempt = r.integer("TORCHELASTIC_RESTART_COUNT", 0, kMaxInt).value_or(0);
  env.job_key = "torchrun/" + key_part(r.text("TORCHELASTIC_RUN_ID").value_or("none")) +
                "/attempt_" + std::to_string(attempt);
  return env;
}

LaunchEnvironment read_open_mpi(const Reader& r) {
  auto env =
      read_rank_variables(r, {Launcher::open_mpi, "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK",
                              "OMPI_COMM_WORLD_LOCAL_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"});
  // Open MPI 4 (ORTE) gives a numeric job id; Open MPI 5 (PRRTE) a PMIx namespace per job.
  if (auto job = r.id("OMPI_MCA_ess_base_jobid")) {
    env.job_key = "open_mpi/" + std::to_string(*job);
    derive_port(env, *job, 0, "OMPI_MCA_ess_base_jobid=" + std::to_string(*job));
  } else if (auto ns = r.text("PMIX_NAMESPACE"); ns && !ns->empty()) {
    env.job_key = "open_mpi/" + key_part(*ns);
    derive_port(env, fnv1a(*ns), 0, "PMIX_NAMESPACE=" + ns->substr(0, 64));
  } else {
    env.job_key = "open_mpi/unknown";
  }
  return env;
}

LaunchEnvironment read_slurm(const Reader& r) {
  LaunchEnvironment env;
  env.launcher = Launcher::slurm;
  env.world_size = r.required("SLURM_NTASKS", 1, kMaxInt, "SLURM_PROCID is");
  env.rank = r.required("SLURM_PROCID", 0, env.world_size - 1, "SLURM_NTASKS is");
  env.local_rank = r.integer("SLURM_LOCALID", 0, kMaxInt).value_or(0);
  if (auto per_node = r.integer("SLURM_NTASKS_PER_NODE", 1, env.world_size)) {
    env.local_world_size = *per_node;
  } else if (auto tasks = r.text("SLURM_TASKS_PER_NODE")) {
    env.local_world_size =
        slurm_tasks_on_node(*tasks, r.integer("SLURM_NODEID", 0, kMaxInt).value_or(0));
  } else {
    env.local_world_size = 0;  // unknown
  }
  check_local(env, "SLURM_LOCALID", "SLURM_NTASKS_PER_NODE");
  std::optional<std::string> first_host;
  for (std::string_view var : {"SLURM_STEP_NODELIST", "SLURM_NODELIST", "SLURM_JOB_NODELIST"}) {
    if (auto list = r.text(var); list && !list->empty()) {
      first_host = first_slurm_host(*list, var);
      break;
    }
  }
  if (!first_host && env.world_size > 1 && !r.text("MASTER_ADDR")) {
    throw ConfigError(
        "Slurm environment without MASTER_ADDR nor SLURM_STEP_NODELIST/SLURM_NODELIST: "
        "cannot tell where rank 0's store runs");
  }
  resolve_master(env, r, first_host.value_or("127.0.0.1"));
  if (auto job = r.id("SLURM_JOB_ID")) {
    const std::uint64_t step = r.id("SLURM_STEP_ID").value_or(0);
    env.job_key = "slurm/" + std::to_string(*job) + "." + std::to_string(step);
    derive_port(env, *job, step,
                "SLURM_JOB_ID=" + std::to_string(*job) + " SLURM_STEP_ID=" + std::to_string(step));
  } else {
    env.job_key = "slurm/unknown";
  }
  env.gpus_bound_per_task = r.text("SLURM_GPUS_PER_TASK").has_value();
  return env;
}

}  // namespace

std::string_view name(Launcher launcher) {
  switch (launcher) {
    case Launcher::none:
      return "none";
    case Launcher::torchrun:
      return "torchrun";
    case Launcher::open_mpi:
      return "open_mpi";
    case Launcher::slurm:
      return "slurm";
  }
  return "invalid";
}

std::string first_slurm_host(std::string_view nodelist, std::string_view variable) {
  auto bad = [&](const std::string& why) {
    return ConfigError(std::string(variable) + "='" + std::string(nodelist) +
                       "' is malformed: " + why);
  };
  std::string host;
  std::size_t i = 0;
  while (i < nodelist.size() && nodelist[i] != ',') {
    const char c = nodelist[i];
    if (c == ']') throw bad("']' without '['");
    if (c != '[') {
      host += c;
      ++i;
      continue;
    }
    const std::size_t close = nodelist.find(']', i);
    if (close == std::string_view::npos) throw bad("'[' without ']'");
    std::string_view inside = nodelist.substr(i + 1, close - i - 1);
    const std::size_t cut = inside.find_first_of(",-");
    std::string_view first = inside.substr(0, cut);
    if (first.empty() || first.find_first_not_of("0123456789") != std::string_view::npos) {
      throw bad("range '[" + std::string(inside) + "]' does not start with a number");
    }
    host += first;
    i = close + 1;
  }
  if (host.empty()) throw bad("no host name");
  return host;
}

int derived_master_port(std::uint64_t job_id, std::uint64_t step_id) {
  return 15000 + static_cast<int>(job_id % 937) * 16 + static_cast<int>(step_id % 16);
}

int choose_local_gpu(const LaunchEnvironment& env, int visible_gpus) {
  if (visible_gpus <= 0) throw BackendError("no CUDA device is visible to this process");
  const int local_ranks = std::max(env.local_world_size, env.local_rank + 1);
  if (local_ranks <= visible_gpus) return env.local_rank;
  if (env.gpus_bound_per_task && visible_gpus == 1) return 0;  // the launcher chose our GPU
  if (env.allow_shared_gpu) return env.local_rank % visible_gpus;
  const std::string gpus = std::to_string(visible_gpus);
  throw ConfigError("rank " + std::to_string(env.rank) + " is local rank " +
                    std::to_string(env.local_rank) + " of " + std::to_string(local_ranks) +
                    " on this node but only " + gpus +
                    " GPU(s) are visible: ranks would share a GPU. Start at most " + gpus +
                    " processes per node (torchrun --nproc-per-node=" + gpus +
                    ", srun --ntasks-per-node=" + gpus + ", mpirun --npernode " + gpus +
                    "), give each task its own GPU (srun " +
                    "--gpus-per-task=1), or set TWINCCL_ALLOW_SHARED_GPU=1 to share on purpose");
}

LaunchEnvironment read_launch_environment(const EnvironmentLookup& lookup) {
  auto has = [&](std::string_view var) { return lookup(var).has_value(); };
  LaunchEnvironment env;
  if (has("RANK") || has("WORLD_SIZE")) {
    env = read_torchrun(Reader{lookup, "torchrun"});
  } else if (has("OMPI_COMM_WORLD_RANK") || has("OMPI_COMM_WORLD_SIZE")) {
    env = read_open_mpi(Reader{lookup, "Open MPI"});
  } else if (has("SLURM_PROCID")) {
    env = read_slurm(Reader{lookup, "Slurm"});
  } else {
    resolve_master(env, Reader{lookup, "single process"}, std::string("127.0.0.1"));
  }
  env.allow_shared_gpu = Reader{lookup, name(env.launcher)}.flag("TWINCCL_ALLOW_SHARED_GPU");
  return env;
}

LaunchEnvironment read_launch_environment() {
  return read_launch_environment([](std::string_view var) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(var).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  });
}

}  // namespace twinccl
