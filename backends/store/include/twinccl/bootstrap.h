// How the ranks of a launched job agree on one NCCL unique id, with no setting beyond what the
// launcher gives (torchrun static/c10d, srun, mpirun). No CUDA here: rank 0's id comes from the
// caller's generator, so tests run it with any bytes.
//
//   const auto env = twinccl::read_launch_environment();
//   std::string id = twinccl::exchange_unique_id(env, sizeof(ncclUniqueId),
//                                                [] { return new_nccl_id_bytes(); }, 300s);
//
// Where the id travels:
//   torchrun with its agent store (TORCHELASTIC_USE_AGENT_STORE=True): every rank is a client
//     of the c10d TCPStore torchrun already serves on MASTER_ADDR:MASTER_PORT; nobody listens.
//   otherwise (srun, mpirun, torchrun with TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1): rank 0 serves
//     TwinCCL's own store on master_port (MASTER_PORT, else derived from the job id) until every
//     rank has confirmed it read the id.
// Keys are "twinccl/<job_key>/nccl_id/<generation>": the generation counts exchanges in this
// process (the first run() is 1, the next 2, ...), the same on every rank because every rank
// calls run() the same number of times, so a second run() never reads the first one's id.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "twinccl/launch_environment.h"

namespace twinccl {

using UniqueIdGenerator = std::function<std::string()>;

// Every rank returns the same `id_bytes` bytes, made by `generate_on_rank0` on rank 0 (called
// there only; world size 1 just calls it). TimeoutError when a rank or the store does not answer
// within `timeout`, BackendError naming host:port for a store that cannot be served or reached,
// InvalidArgument when the generator's output is not id_bytes long.
std::string exchange_unique_id(const LaunchEnvironment& env, std::size_t id_bytes,
                               const UniqueIdGenerator& generate_on_rank0,
                               std::chrono::milliseconds timeout);

// The same with an explicit generation (tests that run several ranks in one process).
std::string exchange_unique_id(const LaunchEnvironment& env, std::size_t id_bytes,
                               const UniqueIdGenerator& generate_on_rank0,
                               std::chrono::milliseconds timeout, std::uint64_t generation);

}  // namespace twinccl
