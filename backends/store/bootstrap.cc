// The unique-id exchange (see bootstrap.h).
//
// How it works, own store (4 ranks, generation g, K = "twinccl/<job>/nccl_id/g"):
//   rank 0: serve store_bind_addr:port; set(K, id); wait(K/read_by_all)   -> return id
//   rank r: connect master_addr:port (retrying); get(K); add(K/read, 1);
//           the rank whose add returns world-1 sets K/read_by_all         -> return id
// Rank 0 stops serving only after every rank read the id. A rank that reaches run() g+1 early
// may connect while rank 0's store of run g is closing: its get fails with a lost connection and
// it connects again (the generation in K keeps it from reading run g's id).
// With torchrun's agent store: rank 0 set(K, id); rank r wait+get(K); the agent keeps serving.
#include "twinccl/bootstrap.h"

#include <atomic>
#include <memory>
#include <optional>
#include <thread>

#include "store/c10d_client.h"
#include "twinccl/errors.h"
#include "twinccl/tcp_store.h"

namespace twinccl {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

std::atomic<std::uint64_t> g_exchanges{0};

milliseconds left(Clock::time_point deadline) {
  return std::max(milliseconds(1),
                  std::chrono::duration_cast<milliseconds>(deadline - Clock::now()));
}

std::string where(const LaunchEnvironment& env) {
  return "rank " + std::to_string(env.rank) + " of " + std::to_string(env.world_size) + " (" +
         std::string(name(env.launcher)) + ")";
}

void check_size(const std::string& id, std::size_t id_bytes, const std::string& from) {
  if (id.size() != id_bytes) {
    throw BackendError(from + " holds " + std::to_string(id.size()) +
                       " bytes, expected a unique id of " + std::to_string(id_bytes) +
                       " (another program using the same store and port?)");
  }
}

std::string through_agent_store(const LaunchEnvironment& env, std::size_t id_bytes,
                                const UniqueIdGenerator& generate, const std::string& key,
                                Clock::time_point deadline) {
  store::C10dStoreClient agent(env.master_addr, env.master_port, deadline);
  if (env.rank == 0) {
    std::string id = generate();
    agent.set(key, id, deadline);
    (void)agent.add(key + "/published", 1, deadline);  // an answer: the store took the set
    return id;
  }
  std::string id = agent.get(key, deadline);
  check_size(id, id_bytes, "torchrun agent store " + agent.address() + ": key '" + key + "'");
  return id;
}

std::string local_address(const std::string& bind) {
  if (bind == "0.0.0.0") return "127.0.0.1";
  if (bind == "::") return "::1";
  return bind;
}

std::string serve_on_rank0(const LaunchEnvironment& env, const UniqueIdGenerator& generate,
                           const std::string& key, Clock::time_point deadline) {
  std::optional<TcpStoreServer> server;
  try {
    server.emplace(StoreServerOptions{.host = env.store_bind_addr, .port = env.master_port});
  } catch (const BackendError& e) {
    throw BackendError(
        where(env) + ": cannot serve the bootstrap store on port " +
        std::to_string(env.master_port) + " (" + env.master_port_origin + "): " + e.what() +
        ". Another job on this node may hold the port: set MASTER_PORT to a free port");
  }
  TcpStoreClient client(local_address(env.store_bind_addr), server->port(),
                        {.connect_timeout = left(deadline), .timeout = left(deadline)});
  std::string id = generate();
  client.set(key, id);
  const std::string keys[] = {key + "/read_by_all"};
  try {
    client.wait(keys, left(deadline));
  } catch (const TimeoutError&) {
    const std::int64_t read = client.add(key + "/read", 0);
    throw TimeoutError(where(env) + ": only " + std::to_string(read) + " of the " +
                       std::to_string(env.world_size - 1) +
                       " other ranks read the unique id from " + client.address() +
                       " in time (key '" + key +
                       "'; did every rank start, and call run() as often as this one?)");
  }
  return id;
}

std::string read_from_rank0(const LaunchEnvironment& env, std::size_t id_bytes,
                            const std::string& key, Clock::time_point deadline) {
  std::string last_error;
  for (;;) {
    std::optional<TcpStoreClient> client;
    std::string id;
    try {
      client.emplace(
          env.master_addr, env.master_port,
          StoreClientOptions{.connect_timeout = left(deadline), .timeout = left(deadline)});
      id = client->get(key, left(deadline));
    } catch (const BackendError& e) {  // rank 0's previous store closing under us: connect again
      last_error = e.what();
      if (Clock::now() >= deadline) throw BackendError(where(env) + ": " + last_error);
      std::this_thread::sleep_for(milliseconds(50));
      continue;
    } catch (const TimeoutError& e) {
      throw TimeoutError(where(env) + ": no unique id from rank 0's store at " + env.master_addr +
                         ":" + std::to_string(env.master_port) + " (" + env.master_port_origin +
                         ", key '" + key + "'): " + e.what());
    }
    check_size(id, id_bytes, "store " + client->address() + ": key '" + key + "'");
    if (client->add(key + "/read", 1) == env.world_size - 1) client->set(key + "/read_by_all", "1");
    return id;
  }
}

}  // namespace

std::string exchange_unique_id(const LaunchEnvironment& env, std::size_t id_bytes,
                               const UniqueIdGenerator& generate, milliseconds timeout) {
  return exchange_unique_id(env, id_bytes, generate, timeout, ++g_exchanges);
}

std::string exchange_unique_id(const LaunchEnvironment& env, std::size_t id_bytes,
                               const UniqueIdGenerator& generate, milliseconds timeout,
                               std::uint64_t generation) {
  if (timeout.count() <= 0) {
    throw InvalidArgument("exchange_unique_id: timeout of " + std::to_string(timeout.count()) +
                          " ms (must be > 0)");
  }
  const UniqueIdGenerator checked = [&] {
    std::string id = generate();
    if (id.size() != id_bytes) {
      throw InvalidArgument("exchange_unique_id: the generator made " + std::to_string(id.size()) +
                            " bytes, expected " + std::to_string(id_bytes));
    }
    return id;
  };
  if (env.world_size == 1) return checked();
  const auto deadline = Clock::now() + timeout;
  const std::string key = "twinccl/" + env.job_key + "/nccl_id/" + std::to_string(generation);
  if (env.agent_store) return through_agent_store(env, id_bytes, checked, key, deadline);
  if (env.rank == 0) return serve_on_rank0(env, checked, key, deadline);
  return read_from_rank0(env, id_bytes, key, deadline);
}

}  // namespace twinccl
