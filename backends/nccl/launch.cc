// run_world and friends (see launch.h).
//
// How it works, several processes (torchrun, srun, mpirun):
//   all:    exchange_unique_id (twinccl/bootstrap.h): rank 0's ncclGetUniqueId reaches every rank
//           through torchrun's agent store, or rank 0's own store (srun, mpirun), per run
//   all:    api().ncclCommInitRankConfig(world, id, rank) on GPU LOCAL_RANK % n; fn(comm)
// Rank 0's own store lives until every rank has read the id.
//
// One process alone: ncclGetUniqueId here, one thread per GPU calling ncclCommInitRankConfig
// concurrently (each thread its own device, so no ncclGroupStart is needed), then fn. With
// TWINCCL_RANKS_PER_GPU=k (NCCL >= 2.30, NCCL_MULTI_RANK_GPU_ENABLE=1) k threads per GPU: ranks
// 0..k-1 on GPU 0, k..2k-1 on GPU 1, ...
#include "nccl/launch.h"

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <chrono>
#include <cstdlib>
#include <exception>
#include <iostream>
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
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::duration<double>(options.timeout_s));
}

ncclUniqueId new_unique_id() {
  ncclUniqueId id{};
  check_nccl(api().ncclGetUniqueId(&id), nullptr, "ncclGetUniqueId");
  return id;
}

int require_gpus() {
  const GpuCensus census = gpu_census();
  if (census.libraries_missing) (void)api();  // throws the loader's one clear BackendError
  if (!census.error.empty()) throw BackendError("TWINCCL_BACKEND=nccl: " + census.error);
  if (census.count == 0)
    throw BackendError("TWINCCL_BACKEND=nccl: no GPU: " + census.no_gpu_reason);
  return census.count;
}

// TWINCCL_WORLD_SIZE and TWINCCL_ALGO are the emulator's: said once on stderr, not silently
// dropped (the world comes from the launcher or the visible GPUs; NCCL picks its algorithms).
void note_ignored_settings(const RunOptions& options, int world_size) {
  static std::once_flag once;
  std::call_once(once, [&] {
    if (const char* n = std::getenv("TWINCCL_WORLD_SIZE");
        n != nullptr && std::to_string(world_size) != n) {
      std::cerr << "twinccl: note: TWINCCL_WORLD_SIZE=" << n
                << " is ignored by the NCCL backend: the world has " << world_size
                << " rank(s) (from the launcher, or one per visible GPU times "
                   "TWINCCL_RANKS_PER_GPU)\n";
    }
    if (!options.algorithm.empty()) {
      std::cerr << "twinccl: note: TWINCCL_ALGO=" << options.algorithm
                << " is ignored by the NCCL backend: NCCL chooses its algorithm (see NCCL_ALGO)\n";
    }
  });
}

// TWINCCL_RANKS_PER_GPU for a process started alone: 1 when unset; more only where NCCL lets
// several ranks share a GPU (>= 2.30 with NCCL_MULTI_RANK_GPU_ENABLE=1), else a ConfigError.
int ranks_per_gpu() {
  const char* text = std::getenv("TWINCCL_RANKS_PER_GPU");
  if (text == nullptr || *text == '\0') return 1;
  char* end = nullptr;
  const long k = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || k < 1 || k > 64) {
    throw ConfigError(std::string("TWINCCL_RANKS_PER_GPU='") + text +
                      "': a whole number of ranks per GPU, 1..64");
  }
  if (k == 1) return 1;
  if (const int v = api().nccl_version; v < 23000) {
    throw ConfigError("TWINCCL_RANKS_PER_GPU=" + std::to_string(k) +
                      ": several ranks on one GPU need NCCL >= 2.30; " + api().nccl_path + " is " +
                      nccl_version_text(v) + " (set TWINCCL_NCCL_LIBRARY to a newer one)");
  }
  const char* enable = std::getenv("NCCL_MULTI_RANK_GPU_ENABLE");
  if (enable == nullptr || std::string(enable) != "1") {
    throw ConfigError("TWINCCL_RANKS_PER_GPU=" + std::to_string(k) +
                      ": several ranks on one GPU need NCCL_MULTI_RANK_GPU_ENABLE=1 (NCCL's "
                      "experimental multi-rank mode; also consider NCCL_MAX_CTAS)");
  }
  return static_cast<int>(k);
}

// The first error of the rank threads, kept with the rank that threw it.
class FirstFailure {
 public:
  // The error kept is the first that is not an AbortedError (a peer that only stopped because
  // of the failure may record its AbortedError before the failing rank's real error arrives).
  void record(int rank, std::exception_ptr error, const std::shared_ptr<AbortSignal>& signal) {
    std::string what = "unknown exception";
    bool aborted = false;
    try {
      std::rethrow_exception(error);
    } catch (const AbortedError& e) {
      what = e.what();
      aborted = true;
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    {
      std::lock_guard lock(mutex_);
      if (!error_ || (error_aborted_ && !aborted)) {
        error_ = error;
        error_aborted_ = aborted;
      }
    }
    signal->raise("rank " + std::to_string(rank) + ": " +
                  what);  // after recording: first stays first
  }
  void rethrow() {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr error_;
  bool error_aborted_ = false;
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
  const std::string bytes =
      exchange_unique_id(env, sizeof b.id.internal, make_id,
                         std::chrono::duration_cast<std::chrono::milliseconds>(timeout));
  std::copy(bytes.begin(), bytes.end(), b.id.internal);
  return b;
}

}  // namespace

GpuCensus gpu_census() {
  GpuCensus census;
  const Api* a = nullptr;
  try {
    a = &api();
  } catch (const BackendError& e) {
    census.no_gpu_reason = std::string("the CUDA/NCCL libraries could not be loaded: ") + e.what();
    census.libraries_missing = true;
    return census;
  }
  int runtime = 0;
  int driver = 0;
  (void)a->cudaRuntimeGetVersion(&runtime);
  (void)a->cudaDriverGetVersion(&driver);
  const cudaError_t rc = a->cudaGetDeviceCount(&census.count);
  if (rc == cudaSuccess && census.count > 0) return census;
  (void)a->cudaGetLastError();  // clear a sticky error
  census.count = 0;
  if (rc == cudaSuccess || rc == cudaErrorNoDevice) {
    census.no_gpu_reason = "cudaGetDeviceCount found no CUDA device";
  } else if (rc == cudaErrorInsufficientDriver && driver == 0) {
    census.no_gpu_reason = "no CUDA driver is installed (cudaDriverGetVersion reports 0)";
  } else if (rc == cudaErrorInsufficientDriver) {
    census.error = "the CUDA driver (version " + std::to_string(driver) +
                   ") is older than the CUDA runtime " + std::to_string(runtime) + " loaded from " +
                   a->cudart_path +
                   ": update the driver or point TWINCCL_CUDART_LIBRARY at an older libcudart";
  } else {
    census.error = std::string("cudaGetDeviceCount failed: ") + a->cudaGetErrorName(rc) + ": " +
                   a->cudaGetErrorString(rc) + " (driver " + std::to_string(driver) + ", runtime " +
                   std::to_string(runtime) + ")";
  }
  return census;
}

int visible_gpu_count() { return gpu_census().count; }

int runtime_nccl_version() {
  try {
    return api().nccl_version;
  } catch (const BackendError&) {
    return 0;  // no NCCL to load
  }
}

int compiled_nccl_version() { return NCCL_VERSION_CODE; }

std::string describe_runtime() {
  int runtime = 0;
  int driver = 0;
  (void)api().cudaRuntimeGetVersion(&runtime);
  (void)api().cudaDriverGetVersion(&driver);
  return nccl_version_text(runtime_nccl_version()) + " (built with " +
         nccl_version_text(compiled_nccl_version()) + "), CUDA runtime " + std::to_string(runtime) +
         ", driver " + std::to_string(driver) + ", " + std::to_string(visible_gpu_count()) +
         " GPU(s); loaded " + api().nccl_path + " and " + api().cudart_path;
}

void run_local_ranks(const std::vector<int>& devices, const RunOptions& options,
                     const RankFunction& fn) {
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
      check_cuda(
          api().cudaSetDevice(device),
          "rank " + std::to_string(rank) + ": api().cudaSetDevice(" + std::to_string(device) + ")");
      auto world = NcclCommunicator::create({.id = id,
                                             .nranks = nranks,
                                             .rank = rank,
                                             .device = device,
                                             .name = "world",
                                             .timeout = timeout,
                                             .signal = signal});
      try {
        fn(*world);
      } catch (const AbortedError&) {
        throw;
      } catch (const std::exception& e) {
        signal->raise("rank " + std::to_string(rank) + ": " +
                      e.what());  // before `world` is destroyed
        throw;
      }
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
    const int per_gpu = ranks_per_gpu();
    note_ignored_settings(options, gpus * per_gpu);
    std::vector<int> devices;
    for (int d = 0; d < gpus; ++d)
      devices.insert(devices.end(), static_cast<std::size_t>(per_gpu), d);
    return run_local_ranks(devices, options, fn);
  }
  note_ignored_settings(options, env.world_size);
  const auto timeout = timeout_of(options);
  const int gpus = require_gpus();
  const int device = choose_local_gpu(env, gpus);  // refuses ranks sharing a GPU
  check_cuda(
      api().cudaSetDevice(device),
      "rank " + std::to_string(env.rank) + ": api().cudaSetDevice(" + std::to_string(device) + ")");
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
