// The split-name agreement on NCCL (see split_names.h).
#include "nccl/split_names.h"

#include <algorithm>
#include <cstring>
#include <tuple>
#include <vector>

#include "nccl/check.h"
#include "nccl/record_exchange.h"
#include "twinccl/call_site_text.h"
#include "twinccl/communicator.h"
#include "twinccl/split_names.h"

namespace twinccl::nccl {
namespace {

// One rank's part of the exchange: fixed size, no pointers, zero-padded text.
struct SplitRecord {
  std::int32_t color = 0;
  std::int32_t key = 0;
  std::uint64_t name_bytes = 0;
  std::uint64_t name_hash = 0;  // FNV-1a 64 of the whole name
  char where[64] = {};          // "file.cc:88", cut to 63 bytes
  char name[160] = {};          // the name's first 160 bytes
  char reserved[8] = {};
};
static_assert(sizeof(SplitRecord) == 256);

SplitRecord record_of(int color, int key, const std::string& asked, std::source_location where) {
  SplitRecord r;
  r.color = color;
  r.key = key;
  r.name_bytes = asked.size();
  r.name_hash = fnv1a(asked.data(), asked.size());
  const std::string site = describe_call_site(where);
  std::memcpy(r.where, site.data(), std::min(site.size(), sizeof r.where - 1));
  std::memcpy(r.name, asked.data(), std::min(asked.size(), sizeof r.name));
  return r;
}

// The name as compared: whole when it fit, else its first bytes and what identifies the rest
// (shown names stop at 80 characters, so the suffix never shows).
std::string name_of(const SplitRecord& r) {
  const std::size_t kept = std::min<std::uint64_t>(r.name_bytes, sizeof r.name);
  std::string name(r.name, kept);
  if (r.name_bytes > sizeof r.name)
    name += '\0' + std::to_string(r.name_bytes) + "/" + std::to_string(r.name_hash);
  return name;
}

}  // namespace

std::string split_name_disagreement(const std::shared_ptr<CommContext>& parent,
                                    const std::shared_ptr<RankScratch>& scratch,
                                    cudaStream_t caller_stream, std::uint64_t split_number,
                                    int color, int key, const std::string& asked,
                                    std::source_location where) {
  const int n = parent->size();
  const SplitRecord mine = record_of(color, key, asked, where);
  DeviceGuard guard(parent->device());
  // Slot 0 holds this rank's record, slots 1..n every rank's after the all_gather.
  RecordExchange exchange(parent, scratch, caller_stream, "split", split_number, where,
                          sizeof(SplitRecord), 1 + static_cast<std::size_t>(n));
  exchange.put(0, &mine);
  exchange.run(
      [&] {
        return api().ncclAllGather(exchange.slot(0), exchange.slot(1), sizeof(SplitRecord),
                                   ncclUint8, parent->comm(), parent->cuda_stream());
      },
      "exchanging the names asked for");
  std::vector<SplitRecord> all(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r)
    exchange.get(1 + static_cast<std::size_t>(r), &all[static_cast<std::size_t>(r)]);
  if (color == kNoColor) return "";
  std::vector<std::tuple<int, int, SplitNameAsked>> members;  // (key, rank, what it asked)
  for (int r = 0; r < n; ++r) {
    const SplitRecord& got = all[static_cast<std::size_t>(r)];
    if (got.color != color) continue;
    const std::string site(got.where, strnlen(got.where, sizeof got.where));
    members.emplace_back(got.key, r, SplitNameAsked{r, name_of(got), site});
  }
  std::sort(members.begin(), members.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a)) < std::tie(std::get<0>(b), std::get<1>(b));
  });
  std::vector<SplitNameAsked> in_order;
  for (auto& m : members) in_order.push_back(std::move(std::get<2>(m)));
  return twinccl::split_name_disagreement(parent->name(), split_number, color, in_order);
}

}  // namespace twinccl::nccl
