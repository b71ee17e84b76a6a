// run_world and friends (see launch.h).
//
// How it works, several processes (torchrun, srun, mpirun):
//   all:    exchange_unique_id (twinccl/bootstrap.h): rank 0's ncclGetUniqueId reaches every rank
//           through torchrun's agent store, or rank 0's own store (srun, mpirun), per run
//   all:    ncclCommInitRankConfig(world, id, rank) on GPU LOCAL_RANK % n; fn(comm)
// Rank 0's own store lives until every rank has read the id.
//
// One process alone: ncclGetUniqueId here, one thread per GPU calling ncclCommInitRankConfig
// concurrently (each thread its own device, so no ncclGroupStart is needed), then fn.
#include "nccl/launch.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <exception>
#include <mutex>
#include <thread>

#include "nccl/check.h"
#include "nccl/communicator.h"
#include "twinccl/bootstrap.h"
#include "twinccl/errors.h"
#include "twinccl/launch_environment.h"

namespace twinccl::nccl {
namespace {

std::chrono::nanoseconds timeout_of(const RunOptions& options) {
  if (!(options.timeout_s > 0)) {
    throw ConfigError("TWINCCL_TIMEOUT_S=" + std::to_string(options.timeout_s) + " must be > 0");
  }
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(options.timeout_s));
}

ncclUniqueId new_unique_id() {
  ncclUniqueId id{};
  check_nccl(ncclGetUniqueId(&id), nullptr, "ncclGetUniqueId");
  return id;
}

int require_gpus() {
  int count = 0;
  const cudaError_t rc = cudaGetDeviceCount(&count);
  if (rc != cudaSuccess) throw_cuda_error(rc, "TWINCCL_BACKEND=nccl: cudaGetDeviceCount (is a GPU visible?)");
  if (count == 0) throw BackendError("TWINCCL_BACKEND=nccl: no CUDA device is visible to this process");
  return count;
}

// The first error of the rank threads, kept with the rank that threw it.
class FirstFailure {
 public:
  void record(int rank, std::exception_ptr error, const std::shared_ptr<AbortSignal>& signal) {
    std::string what = "unknown exception";
    try {
      std::rethrow_exception(error);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    {
      std::lock_guard lock(mutex_);
      if (!error_) error_ = error;
    }
    signal->raise("rank " + std::to_string(rank) + ": " + what);  // after recording: first stays first
  }
  void rethrow() {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr error_;
};

// Every rank gets rank 0's unique id from the launcher's store (twinccl/bootstrap.h).
struct Bootstrap {
  ncclUniqueId id{};
};

Bootstrap bootstrap(const LaunchEnvironment& env, std::chrono::nanoseconds timeout) {
  Bootstrap b;
  const auto make_id = [] {
    const ncclUniqueId id = new_unique_id();
    return std::string(id.internal, sizeof id.internal);
  };
  const std::string bytes = exchange_unique_id(env, sizeof b.id.internal, make_id,
                                               std::chrono::duration_cast<std::chrono::milliseconds>(timeout));
  std::copy(bytes.begin(), bytes.end(), b.id.internal);
  return b;
}

}  // namespace

int visible_gpu_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    (void)cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return count;
}

int runtime_nccl_version() {
  int version = 0;
  if (ncclGetVersion(&version) != ncclSuccess) return 0;
  return version;
}

int compiled_nccl_version() { return NCCL_VERSION_CODE; }

std::string describe_runtime() {
  int runtime = 0;
  int driver = 0;
  (void)cudaRuntimeGetVersion(&runtime);
  (void)cudaDriverGetVersion(&driver);
  return nccl_version_text(runtime_nccl_version()) + " (built with " + nccl_version_text(compiled_nccl_version()) +
         "), CUDA runtime " + std::to_string(runtime) + ", driver " + std::to_string(driver) + ", " +
         std::to_string(visible_gpu_count()) + " GPU(s)";
}

void run_local_ranks(const std::vector<int>& devices, const RunOptions& options, const RankFunction& fn) {
  if (devices.empty()) throw InvalidArgument("run_local_ranks: no devices given");
  const auto timeout = timeout_of(options);
  const int gpus = require_gpus();
  for (int d : devices) {
    if (d < 0 || d >= gpus) {
      throw InvalidArgument("run_local_ranks: device " + std::to_string(d) + " out of range [0, " +
                            std::to_string(gpus) + ")");
    }
  }
  const int nranks = static_cast<int>(devices.size());
  const ncclUniqueId id = new_unique_id();
  auto signal = std::make_shared<AbortSignal>();
  FirstFailure failure;
  auto rank_main = [&](int rank) {
    try {
      const int device = devices[static_cast<std::size_t>(rank)];
      // The rank's own CUDA code (kernels, cudaMalloc) runs on its GPU too.
      check_cuda(cudaSetDevice(device), "rank " + std::to_string(rank) + ": cudaSetDevice(" + std::to_string(device) + ")");
      auto world = NcclCommunicator::create({.id = id,
                                             .nranks = nranks,
                                             .rank = rank,
                                             .device = device,
                                             .name = "world",
                                             .timeout = timeout,
                                             .signal = signal});
      fn(*world);
    } catch (...) {
      failure.record(rank, std::current_exception(), signal);
    }
  };
  if (nranks == 1) {
    rank_main(0);
  } else {
    std::vector<std::thread> threads;
    threads.reserve(devices.size());
    for (int r = 0; r < nranks; ++r) threads.emplace_back(rank_main, r);
    for (auto& t : threads) t.join();
  }
  failure.rethrow();
}

void run_world(const RunOptions& options, const RankFunction& fn) {
  const LaunchEnvironment env = read_launch_environment();
  if (env.launcher == Launcher::none) {
    const int gpus = require_gpus();
    std::vector<int> devices(static_cast<std::size_t>(gpus));
    for (int d = 0; d < gpus; ++d) devices[static_cast<std::size_t>(d)] = d;
    return run_local_ranks(devices, options, fn);
  }
  const auto timeout = timeout_of(options);
  const int gpus = require_gpus();
  const int device = choose_local_gpu(env, gpus);  // refuses ranks sharing a GPU
  check_cuda(cudaSetDevice(device), "rank " + std::to_string(env.rank) + ": cudaSetDevice(" + std::to_string(device) + ")");
  Bootstrap boot = bootstrap(env, timeout);
  auto world = NcclCommunicator::create({.id = boot.id,
                                         .nranks = env.world_size,
                                         .rank = env.rank,
                                         .device = device,
                                         .name = "world",
                                         .timeout = timeout,
                                         .signal = nullptr});
  fn(*world);
}

}  // namespace twinccl::nccl
