// Test support: see child_ranks.h.
#include "child_ranks.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace child_ranks {
namespace {

bool launcher_variable(const std::string& entry) {
  for (const char* prefix : {"RANK=", "WORLD_SIZE=", "LOCAL_", "MASTER_", "GROUP_", "ROLE_",
                             "TORCHELASTIC_", "TORCH_", "SLURM_", "OMPI_", "PMIX_", "TWINCCL_"}) {
    if (entry.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

}  // namespace

pid_t start_child_rank(const char* child_test, const Env& rank_env,
                       const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (!launcher_variable(*e)) env.emplace_back(*e);
  }
  for (const auto& [name, value] : rank_env) env.push_back(name + "=" + value);
  env.insert(env.end(), extra.begin(), extra.end());
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  std::string arg0 = "tests_backends", arg1 = child_test;
  char* argv[] = {arg0.data(), arg1.data(), nullptr};
  const pid_t pid = ::fork();
  if (pid == 0) {  // only async-signal-safe calls until exec
    const int null_fd = ::open("/dev/null", O_WRONLY);
    ::dup2(null_fd, 1);
    ::dup2(null_fd, 2);
    ::execve("/proc/self/exe", argv, envp.data());
    ::_exit(127);
  }
  return pid;
}

bool port_free(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  const int one = 1;
  (void)::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return ok;
}

int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  (void)::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  (void)::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

void wait_or_kill(const std::vector<pid_t>& pids, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (pid_t pid : pids) {
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
        break;
      }
      ::usleep(20'000);
    }
  }
}

}  // namespace child_ranks
