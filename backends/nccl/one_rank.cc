// Pieces for NCCL's one-rank reduction kernel (see one_rank.h).
#include "nccl/one_rank.h"

#include <algorithm>

namespace twinccl::nccl {
namespace {

constexpr std::size_t kBlockBytes = std::size_t{16} << 10;  // ncclLaunchOneRank: 16 KiB per block
constexpr std::size_t kMaxBlocks = 32;
constexpr std::size_t kPackBytes = 16;  // oneRankReduce: EltPerPack = 16 / sizeof(T)

// The elements oneRankReduce writes for a call of `n` elements: [0, written(n)).
std::size_t written(std::size_t n, std::size_t e) {
  if (n == 0) return 0;
  const std::size_t grid = std::min(kMaxBlocks, (n * e + kBlockBytes - 1) / kBlockBytes);
  const std::size_t pack = std::max<std::size_t>(kPackBytes / e, 1);
  const std::size_t each = (n / grid + pack - 1) / pack * pack;
  return std::min(n, grid * each);
}

}  // namespace

bool uses_one_rank_kernel(const OpDesc& op, int size) {
  if (size != 1) return false;
  const bool reduces = op.kind == OpKind::all_reduce || op.kind == OpKind::reduce_scatter ||
                       op.kind == OpKind::reduce || op.kind == OpKind::reduce_scatter_v;
  return reduces && (op.op.kind == ReduceKind::premul_sum ||
                     (op.op.kind == ReduceKind::avg && twinccl::is_floating(op.dtype)));
}

std::vector<OnePiece> one_rank_pieces(std::size_t count, std::size_t element_bytes, bool kernel) {
  const std::size_t e = std::max<std::size_t>(element_bytes, 1);
  if (!kernel || written(count, e) == count) return {{0, count}};
  std::vector<OnePiece> pieces;
  const std::size_t pack = std::max<std::size_t>(kPackBytes / e, 1);
  std::size_t first = 0;
  if (count * e > kMaxBlocks * kBlockBytes) {  // one piece on 32 blocks, then the rest
    const std::size_t main = count / (kMaxBlocks * pack) * (kMaxBlocks * pack);
    pieces.push_back({0, main});
    first = main;
  }
  const std::size_t step = kBlockBytes / e;  // one block each
  for (; first < count; first += step) pieces.push_back({first, std::min(step, count - first)});
  return pieces;
}

}  // namespace twinccl::nccl
