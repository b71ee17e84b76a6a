// Timing of one collective on a Topology, at two fidelities behind one interface.
//
//   sim::Request r;                       // all ranks of the topology, float32, fastest choice
//   r.spec.kind = OpKind::all_reduce; r.spec.count = 1 << 20; r.algorithm = "ring";
//   sim::Prediction p = sim::predict(topo::dgx_h100(), r);   // p.time_us, p.busbw_gbps
//   for (const sim::Prediction& c : sim::compare_all(topo::dgx_h100(), r)) ...  // fastest first
//
// analytic: NCCL's tuning model (ring, tree, nvls, pat) and plain alpha-beta for the algorithms
// NCCL has no model for; closed form, microseconds per call at any scale. flow: the algorithm's
// Schedule played on a SimGrid flow-level model of the topology (link contention).
// docs/simulator.md says what each models. Every error is a twinccl::InvalidArgument naming the
// field, the bad value and what applies.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "twinccl/algorithms.h"
#include "twinccl/data_type.h"
#include "twinccl/reduce_op.h"
#include "twinccl/schedule.h"
#include "twinccl/sim/nccl_tests_log.h"
#include "twinccl/topologies/topology.h"

namespace twinccl::sim {

enum class Fidelity { analytic, flow };
// NCCL's protocols: LL (8 data bytes per 16-byte line), LL128 (120 per 128), Simple (raw buffers).
enum class Protocol { ll, ll128, simple };
// Flow fidelity: play each distinct round of a symmetric ring once (automatic: when the ring has
// more than 64 ranks; exact when the ring's chunks are equal, see docs/simulator.md).
enum class RoundCompression { automatic, off, on };

// The most channels a request may force: NCCL's MAXCHANNELS (src/include/device.h), to which it
// clamps NCCL_MIN_NCHANNELS / NCCL_MAX_NCHANNELS. (The flow model's work grows faster than
// linearly in channels: 128 took minutes.)
inline constexpr int kMaxRequestChannels = 64;

// A spec taking every rank of the topology (nranks 0), params choosing channels (channels 0).
inline CollectiveSpec all_ranks_spec() {
  CollectiveSpec spec;
  spec.nranks = 0;
  return spec;
}
inline AlgorithmParams model_channels_params() {
  AlgorithmParams params;
  params.channels = 0;
  return params;
}

struct Request {
  // spec.nranks: ranks taking part, 0 = the topology's GPU count (ranks 0..nranks-1).
  CollectiveSpec spec = all_ranks_spec();
  DataType dtype = DataType::float32;
  // "" = the fastest of NCCL's algorithms that apply (ring, tree, nvls, nvls_tree, pat), as NCCL
  // chooses; or a registry name, or "nvls_tree" (NCCL's multi-node NVLS; flow plays hierarchical).
  std::string algorithm;
  std::optional<Protocol> protocol;  // unset = the fastest applicable one
  // NCCL_ALGO / NCCL_PROTO lists of the run (nccl_env_choice.h): NCCL ranks only these ({} = all;
  // twinccl names). Unlike `algorithm` / `protocol` they restrict NCCL's ranking, not force a pair.
  std::vector<std::string> allowed_algorithms;
  std::vector<Protocol> allowed_protocols;
  // The run sets NCCL_PROTO (any value, "^" too): it replaces a cloud profile's NCCL_PROTO
  // (NetworkNcclProto::applies), as NCCL reads one value.
  bool nccl_proto_set = false;
  // params.channels 0 = as NCCL would pick for the topology (analytic); flow: 1 inside a node, one
  // per GPU of a node across nodes (channel c on rail c). ranks_per_node 0 = the topology's.
  AlgorithmParams params = model_channels_params();
  Fidelity fidelity = Fidelity::analytic;
  // NCCL's software latencies (base and per-hop, nccl-facts.md); false = the network alone.
  bool software_latency = true;
  // The host side as nccl-tests times a call (sim/src/host_launch.h): the GPUs one host thread
  // launches (nccl-tests -g; 1 = one GPU per process or thread, -t N -g 1 or mpirun), each launch
  // ~5 us (CUDA launch + NCCL enqueue, NCCL's maintainer); time = max(kernels + 5 us,
  // gpus_per_thread x 5 us). 0 = the kernels alone, as NCCL's tuning model times them. Common to
  // every algorithm: it never changes the choice.
  int gpus_per_thread = 0;
  // The NCCL whose tuning model chooses (NCCL_VERSION_CODE: 22602 = 2.26.2, as a log's "NCCL
  // version" line gives it; nccl_version_code()); 0 = the newest model. Only the choice follows
  // it: NCCL before 2.28.9 ranked NVLS-tree with other terms (sim/src/nccl_version_rank.cc); the
  // time of the chosen call is the newest model's.
  int nccl_version = 0;
  // nccl-tests' in-place column (the send buffer is the receive buffer) and the reduce op: they
  // change only a one-rank call, which NCCL runs as no collective (Prediction::one_rank).
  bool in_place = false;
  ReduceKind op = ReduceKind::sum;
  RoundCompression compression = RoundCompression::automatic;
  // Flow fidelity, rounds (compressed rings, NVLS switch flows): play one representative of
  // every class of identical flow groups that share no link with each other, copying its times
  // (exact; docs/simulator.md). false = play every flow (the reference the tests compare with).
  bool aggregate_symmetric_flows = true;
};

// What one row of an nccl-tests log asks of the model: the table's collective (its `kind` must be
// set), ranks and nccl-tests host side (-g), the row's count, root, data type and reduce op, and
// the log's NCCL version; nothing forced (fastest algorithm and protocol, analytic). The one
// reading of a log row for `compare`, `calibrate` and the fidelity tests. Throws ConfigError
// naming "<source>:<line>" when the row's root is not one of the table's ranks.
Request request_of(const NcclTestsTable& table, const NcclTestsRow& row, bool in_place = false);

struct Prediction {
  std::string algorithm;
  Protocol protocol = Protocol::simple;
  int channels = 1;
  int nranks = 1;
  Fidelity fidelity = Fidelity::analytic;
  std::string model;  // "nccl", "alpha-beta" or "flow"
  double time_us = 0.0;
  double algbw_gbps = 0.0;  // perf_math.h: algbw_bytes / time
  double busbw_gbps = 0.0;  // algbw * busbw_factor
  // compare_all: the time the tuner ranked this pair by (Choice::rank_us: NCCL's model on all
  // channels, no NVLS/tree pipeline fill, no host launch), and whether it is the tuner's choice
  // (what predict() returns for the same request without a forced algorithm or protocol).
  double rank_us = 0.0;
  bool tuner_choice = false;
  std::string chosen_by;  // the choice's row: who chose it in NCCL's place ("" = NCCL's ranking)
  // A one-rank all_reduce, reduce, broadcast, reduce_scatter or all_gather: NCCL runs no algorithm
  // (enqueue.cc taskAppend -> ncclLaunchOneRank): "copy" (out of place: a cudaMemcpyAsync through
  // device memory), "none" (in place: nothing, the host's call alone), "scale" (avg on floats,
  // premul_sum: a scaling kernel, in place or not, one read and one write). algorithm/protocol
  // are then only the tuner's nominal pick (every pair times the same), not what runs; "" = a
  // collective NCCL runs. label() says what a table shows.
  std::string one_rank;
};

// What a table's algorithm/protocol column shows: "ring/LL", or "one_rank/copy" (one_rank).
std::string label(const Prediction& p);

// One prediction for request.algorithm/protocol, or the tuner's choice when unset (NCCL's own
// ranking: compare_all's row marked tuner_choice, not necessarily its first).
Prediction predict(const topo::Topology& topology, const Request& request);
// Every applicable (algorithm, protocol) pair, fastest first (ties: registry order), what-if
// algorithms (direct, halving_doubling, bruck, hierarchical) included; the tuner's choice is
// marked (tuner_choice). It need not be the first: the tuner ranks NCCL's algorithms as NCCL does
// (rank_us), and the times here are as the call runs (time_us). `timed`: a pair of this call
// already timed at request.fidelity (predict()'s answer for the same request, unforced or with
// the pair forced), reused for that pair instead of timing it again (a flow simulation).
std::vector<Prediction> compare_all(const topo::Topology& topology, const Request& request,
                                    const Prediction* timed = nullptr);

// The protocols an algorithm may run with: LL/LL128/Simple for ring and tree, Simple otherwise.
std::vector<Protocol> protocols_for(std::string_view algorithm);

std::string_view name(Protocol protocol);  // "LL", "LL128", "Simple"
std::string_view name(Fidelity fidelity);  // "analytic", "flow"
// Case-insensitive; throws InvalidArgument listing the accepted names.
Protocol parse_protocol(std::string_view text);
Fidelity parse_fidelity(std::string_view text);

}  // namespace twinccl::sim
