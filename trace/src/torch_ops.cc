// A torch.distributed call (record_param_comms) as a TwinCCL operation (torch_read.h).
//
// How it works. ProcessGroupNCCL records "In msg nelems"/"Out msg nelems" as the numel of the
// call's input and output tensors (read in PyTorch's ProcessGroupNCCL.cpp), and TwinCCL counts as
// NCCL does (operation.h), so:
//
//   torch name                                   in          out         TwinCCL op, count
//   allreduce, allreduce_coalesced               c           c           all_reduce, c
//   broadcast / reduce                           c           c           broadcast / reduce, c
//   all_gather, _allgather_base,
//     allgather_into_tensor_coalesced            c           n*c         all_gather, c
//   reduce_scatter, _reduce_scatter_base,
//     reduce_scatter_tensor_coalesced            n*c         c           reduce_scatter, c
//   all_to_all (equal split)                     n*c         n*c         all_to_all, c (per peer)
//   all_to_allv                                  sum(rows)*w  ...         all_to_all_v, counts
//   gather / scatter                             c / n*c     n*c / c     gather / scatter, c
//   send / recv                                  c           c           send / recv, c
//   barrier                                      0           0           barrier
//
// all_to_allv's "In split size" lists rows of dim 0 sent to each rank; a row holds
// in/sum(rows) elements. "Rank" is the root of broadcast/reduce/gather/scatter; the peer of
// send/recv is "Dst Rank"/"Src Rank" (world ranks) or "Rank" (its group rank). The coalesced
// variants (several tensors in one NCCL group) become one op of their total size.
#include <limits>
#include <map>

#include "torch_read.h"
#include "twinccl/errors.h"

namespace twinccl::trace::detail {
namespace {

[[noreturn]] void fail(const std::string& where, const std::string& what) {
  throw ConfigError(where + ": " + what);
}

// c10::toString(ScalarType), as the profiler writes "dtype". 2-byte integers have no TwinCCL
// type: they are timed as float16 (same size; the replay moves bytes). Bool is one byte.
DataType dtype_of(const std::string& torch, const std::string& where) {
  static const std::map<std::string, DataType> kTypes = {
      {"Byte", DataType::uint8},
      {"Char", DataType::int8},
      {"Bool", DataType::uint8},
      {"Short", DataType::float16},
      {"UInt16", DataType::float16},
      {"Int", DataType::int32},
      {"UInt32", DataType::uint32},
      {"Long", DataType::int64},
      {"UInt64", DataType::uint64},
      {"Half", DataType::float16},
      {"BFloat16", DataType::bfloat16},
      {"Float", DataType::float32},
      {"Double", DataType::float64},
      {"Float8_e4m3fn", DataType::float8_e4m3},
      {"Float8_e5m2", DataType::float8_e5m2},
      {"Float8_e4m3fnuz", DataType::float8_e4m3},
      {"Float8_e5m2fnuz", DataType::float8_e5m2}};
  const auto it = kTypes.find(torch);
  if (it == kTypes.end()) {
    fail(where + ": 'dtype'", "'" + torch.substr(0, 40) +
                                  "' is not a type TwinCCL knows (Byte, Char, Bool, Short, Int, "
                                  "Long, Half, BFloat16, Float, Double, Float8_e4m3fn, ...)");
  }
  return it->second;
}

std::size_t divided(std::uint64_t total, int n, const std::string& where, const char* field) {
  if (total % static_cast<std::uint64_t>(n) != 0) {
    fail(where + ": '" + field + "'", std::to_string(total) + " is not a multiple of the group's " +
                                          std::to_string(n) + " ranks");
  }
  return static_cast<std::size_t>(total / static_cast<std::uint64_t>(n));
}

void expect(std::uint64_t got, std::uint64_t want, const std::string& where, const char* field,
            const std::string& why) {
  if (got != want) {
    fail(where + ": '" + field + "'",
         "is " + std::to_string(got) + ", expected " + std::to_string(want) + " (" + why + ")");
  }
}

// a * n, or the largest value when it does not fit (nelems are at most 2^50; a product over that
// never equals a recorded one).
std::uint64_t times_n(std::uint64_t a, int n) {
  const auto b = static_cast<std::uint64_t>(n);
  return a > std::numeric_limits<std::uint64_t>::max() / b
             ? std::numeric_limits<std::uint64_t>::max()
             : a * b;
}

// A comm rank from a world rank (Src/Dst Rank) or a group rank ("Rank").
int peer_of(const TorchCommCall& c, std::int64_t world_peer, const std::vector<int>& ranks,
            const std::string& where, const char* field) {
  if (world_peer >= 0) {
    for (std::size_t i = 0; i < ranks.size(); ++i)
      if (ranks[i] == world_peer) return static_cast<int>(i);
    fail(where + ": '" + field + "'",
         "rank " + std::to_string(world_peer) + " is not in the process group");
  }
  if (c.rank_field >= 0 && c.rank_field < static_cast<std::int64_t>(ranks.size()))
    return static_cast<int>(c.rank_field);
  fail(where,
       std::string("a ") + c.collective + " without its peer ('" + field + "' or 'Rank' in range)");
}

std::vector<std::size_t> all_to_allv_counts(const TorchCommCall& c, int n,
                                            const std::string& where) {
  if (c.split_truncated) {
    fail(where + ": 'In split size'",
         "the profiler cut the list short (it keeps 30 entries): the per-rank sizes are unknown");
  }
  if (c.in_split.size() != static_cast<std::size_t>(n)) {
    fail(where + ": 'In split size'", "has " + std::to_string(c.in_split.size()) +
                                          " entries, the group has " + std::to_string(n) +
                                          " ranks");
  }
  std::uint64_t rows = 0;
  for (std::uint64_t r : c.in_split) {
    if (r > (std::uint64_t{1} << 60) - rows) fail(where + ": 'In split size'", "sum overflows");
    rows += r;
  }
  if (rows == 0) {
    expect(c.in_nelems, 0, where, "In msg nelems", "the splits send no rows");
    return std::vector<std::size_t>(static_cast<std::size_t>(n), 0);
  }
  if (c.in_nelems % rows != 0) {
    fail(where + ": 'In msg nelems'", std::to_string(c.in_nelems) + " is not a multiple of the " +
                                          std::to_string(rows) + " rows the splits send");
  }
  const std::uint64_t per_row = c.in_nelems / rows;
  std::vector<std::size_t> counts;
  for (std::uint64_t r : c.in_split) counts.push_back(static_cast<std::size_t>(r * per_row));
  return counts;  // r * per_row <= in_nelems <= 2^50
}

}  // namespace

bool op_of_call(const TorchCommCall& c, const std::vector<int>& ranks, int me,
                const std::string& where, TraceOp& op, std::string& skipped, bool& root_assumed) {
  const int n = static_cast<int>(ranks.size());
  const std::string& name = c.collective;
  op = TraceOp{};
  root_assumed = false;
  auto rooted = [&](OpKind kind) {
    op.kind = kind;
    if (c.rank_field >= 0 && c.rank_field < n) {
      op.root = static_cast<int>(c.rank_field);
    } else {
      op.root = 0;
      root_assumed = true;
    }
  };
  if (name == "allreduce" || name == "allreduce_coalesced") {
    op.kind = OpKind::all_reduce;
    op.count = c.in_nelems;
  } else if (name == "broadcast" || name == "reduce") {
    rooted(name == "broadcast" ? OpKind::broadcast : OpKind::reduce);
    op.count = c.in_nelems;
  } else if (name == "all_gather" || name == "allgather" || name == "_allgather_base" ||
             name == "allgather_into_tensor_coalesced" || name == "allgather_coalesced") {
    op.kind = OpKind::all_gather;
    op.count = c.in_nelems;
    expect(c.out_nelems, times_n(c.in_nelems, n), where, "Out msg nelems",
           "all_gather writes group size x input");
  } else if (name == "reduce_scatter" || name == "_reduce_scatter_base" ||
             name == "reduce_scatter_tensor_coalesced") {
    op.kind = OpKind::reduce_scatter;
    op.count = c.out_nelems;
    expect(c.in_nelems, times_n(c.out_nelems, n), where, "In msg nelems",
           "reduce_scatter reads group size x output");
  } else if (name == "all_to_all" || name == "alltoall" || name == "alltoall_base") {
    op.kind = OpKind::all_to_all;
    op.count = divided(c.in_nelems, n, where, "In msg nelems");
  } else if (name == "all_to_allv") {
    if (c.in_split.empty() && !c.split_truncated) {  // no splits: equal parts
      op.kind = OpKind::all_to_all;
      op.count = divided(c.in_nelems, n, where, "In msg nelems");
    } else {
      op.kind = OpKind::all_to_all_v;
      op.counts = all_to_allv_counts(c, n, where);
    }
  } else if (name == "gather") {
    rooted(OpKind::gather);
    op.count = c.in_nelems;
  } else if (name == "scatter") {
    rooted(OpKind::scatter);
    op.count = c.out_nelems;
  } else if (name == "send" || name == "recv") {
    op.kind = name == "send" ? OpKind::send : OpKind::recv;
    op.count = c.in_nelems;
    op.peer = name == "send" ? peer_of(c, c.dst_rank, ranks, where, "Dst Rank")
                             : peer_of(c, c.src_rank, ranks, where, "Src Rank");
    if (op.peer == me) fail(where, "a " + name + " to itself");
  } else if (name == "barrier") {
    op.kind = OpKind::barrier;
  } else {
    skipped = name;  // "wait", "coalesced", names of newer PyTorch versions
    return false;
  }
  op.dtype = op.kind == OpKind::barrier ? DataType::uint8 : dtype_of(c.dtype, where);
  return true;
}

}  // namespace twinccl::trace::detail
