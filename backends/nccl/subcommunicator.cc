// NcclCommunicator::do_subcommunicator: a communicator of some ranks made by those ranks only, as
// NCCL makes one: ncclCommInitRankConfig(members, id, index) with a unique id they all hold.
//
// How it works: the id must reach the members from one of them, and the launcher's store is gone
// once the world's id was read (launch.h; one process of GPU threads never had one), so it goes
// over the parent, point to point between the first listed member (the new rank 0, the leader)
// and each other member: p2p involves only its two ranks, so the other ranks of the parent take
// no part, as with NCCL's own members-only init. Round 1, one NCCL group: the leader sends its
// record (ranks, name, call site; 384 bytes) to every member and receives theirs; each member does
// the reverse. A member whose leader asked for something else knows it now, as the leader does:
// both throw MismatchError (ranks listed in a different order each find the other's record). Round
// 2: the leader sends each agreeing member the verdict: its ncclGetUniqueId id, or the record of a
// member that disagreed (every member then throws the same MismatchError). Both rounds are waited
// for with the communicator's timeout. Then every member calls ncclCommInitRankConfig on its own
// new stream, polled as a split's child.
#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

#include "nccl/check.h"
#include "nccl/communicator.h"
#include "nccl/record_exchange.h"
#include "twinccl/call_site_text.h"
#include "twinccl/errors.h"
#include "twinccl/subcommunicator_text.h"

namespace twinccl::nccl {
namespace {

// One member's request: fixed size, no pointers, zero-padded text.
struct MembersRecord {
  std::uint64_t ranks_count = 0;
  std::uint64_t ranks_hash = 0;  // FNV-1a 64 of the whole list, in order
  std::uint64_t name_bytes = 0;
  std::uint64_t name_hash = 0;  // FNV-1a 64 of the whole name
  std::int32_t rank = 0;        // in the parent
  std::int32_t reserved = 0;
  std::int32_t first_ranks[16] = {};  // for the message
  char where[64] = {};                // "file.cc:88", cut to 63 bytes
  char name[160] = {};                // the name's first 160 bytes
  char padding[56] = {};
};
static_assert(sizeof(MembersRecord) == 384 && sizeof(MembersRecord) <= RankScratch::kRecordBytes);

// Round 2, leader to member: the id to init with, or (agreed == 0) a member that disagreed.
struct Verdict {
  ncclUniqueId id{};
  std::int32_t agreed = 0;
  std::int32_t reserved = 0;
  MembersRecord disagreeing;
};

static_assert(sizeof(Verdict) <= RankScratch::kVerdictBytes);

MembersRecord record_of(int rank, const std::vector<int>& ranks, const std::string& name,
                        std::source_location where) {
  MembersRecord r;
  r.ranks_count = ranks.size();
  r.ranks_hash = fnv1a(ranks.data(), ranks.size() * sizeof(int));
  r.name_bytes = name.size();
  r.name_hash = fnv1a(name.data(), name.size());
  r.rank = rank;
  for (std::size_t i = 0; i < ranks.size() && i < 16; ++i) r.first_ranks[i] = ranks[i];
  const std::string site = describe_call_site(where);
  std::memcpy(r.where, site.data(), std::min(site.size(), sizeof r.where - 1));
  std::memcpy(r.name, name.data(), std::min(name.size(), sizeof r.name));
  return r;
}

bool same_request(const MembersRecord& a, const MembersRecord& b) {
  return a.ranks_count == b.ranks_count && a.ranks_hash == b.ranks_hash &&
         a.name_bytes == b.name_bytes && a.name_hash == b.name_hash;
}

MembersAsked asked_of(const MembersRecord& r) {
  MembersAsked a;
  a.rank = r.rank;
  a.name.assign(r.name, std::min<std::uint64_t>(r.name_bytes, sizeof r.name));
  a.ranks.assign(r.first_ranks, r.first_ranks + std::min<std::uint64_t>(r.ranks_count, 16));
  a.total = r.ranks_count;
  a.where.assign(r.where, strnlen(r.where, sizeof r.where));
  return a;
}

// Sends and receives of whole records in one NCCL group: (slot, peer) each.
using Moves = std::vector<std::pair<std::size_t, int>>;
void move_records(RecordExchange& x, std::size_t bytes, const Moves& sends, const Moves& recvs,
                  ncclComm_t comm, cudaStream_t stream, std::string_view doing) {
  x.run(
      [&] {
        ncclResult_t rc = api().ncclGroupStart();
        for (auto [slot, peer] : sends)
          if (rc == ncclSuccess)
            rc = api().ncclSend(x.slot(slot), bytes, ncclUint8, peer, comm, stream);
        for (auto [slot, peer] : recvs)
          if (rc == ncclSuccess)
            rc = api().ncclRecv(x.slot(slot), bytes, ncclUint8, peer, comm, stream);
        const ncclResult_t end = api().ncclGroupEnd();  // always: the group is closed
        return rc != ncclSuccess ? rc : end;
      },
      doing);
}

}  // namespace

std::unique_ptr<Communicator> NcclCommunicator::do_subcommunicator(std::vector<int> ranks,
                                                                   int new_rank,
                                                                   std::string new_name,
                                                                   Where where) {
  const std::string what = call_site_text("subcommunicator", name(), rank(), where) + " of ranks " +
                           ranks_text(ranks, 16);
  ctx_->throw_if_aborted(what);
  DeviceGuard guard(ctx_->device());
  const std::uint64_t number = ++op_count_;
  const MembersRecord mine = record_of(rank(), ranks, new_name, where);
  const int leader = ranks[0];
  ncclComm_t comm = ctx_->comm();
  cudaStream_t parent_stream = ctx_->cuda_stream();
  constexpr std::string_view kOp = "subcommunicator";
  constexpr std::string_view kRequests = "exchanging the members' requests";
  const std::size_t others = ranks.size() - 1;
  Verdict verdict;
  MembersRecord led = mine;  // the leader's request
  if (new_rank == 0) {
    // Round 1: slot 0 holds this record, slots 1.. the members' (in their order in `ranks`).
    RecordExchange round1(ctx_, scratch_, caller_stream_, kOp, number, where, sizeof(MembersRecord),
                          1 + others);
    round1.put(0, &mine);
    Moves sends, recvs;
    for (std::size_t i = 1; i < ranks.size(); ++i) {
      sends.emplace_back(0, ranks[i]);
      recvs.emplace_back(i, ranks[i]);
    }
    if (others > 0)
      move_records(round1, sizeof(MembersRecord), sends, recvs, comm, parent_stream, kRequests);
    std::vector<MembersRecord> theirs(ranks.size());
    for (std::size_t i = 1; i < ranks.size(); ++i) round1.get(i, &theirs[i]);
    std::optional<MembersRecord> disagreeing;
    std::vector<int> agreeing;
    for (std::size_t i = 1; i < ranks.size(); ++i) {
      if (same_request(theirs[i], mine)) {
        agreeing.push_back(ranks[i]);
      } else if (!disagreeing) {
        disagreeing = theirs[i];
      }
    }
    if (disagreeing) {
      verdict.disagreeing = *disagreeing;
    } else {
      check_nccl(api().ncclGetUniqueId(&verdict.id), nullptr, what + ": ncclGetUniqueId");
      verdict.agreed = 1;
    }
    // Round 2, to the members that agreed with this rank (the others already know).
    if (!agreeing.empty()) {
      RecordExchange round2(ctx_, scratch_, caller_stream_, kOp, number, where, sizeof(Verdict), 1);
      round2.put(0, &verdict);
      sends.clear();
      for (int peer : agreeing) sends.emplace_back(0, peer);
      move_records(round2, sizeof(Verdict), sends, {}, comm, parent_stream,
                   "sending the new communicator's id");
    }
  } else {
    RecordExchange round1(ctx_, scratch_, caller_stream_, kOp, number, where, sizeof(MembersRecord),
                          2);
    round1.put(0, &mine);
    move_records(round1, sizeof(MembersRecord), {{0, leader}}, {{1, leader}}, comm, parent_stream,
                 kRequests);
    round1.get(1, &led);
    if (!same_request(led, mine)) {
      throw MismatchError(members_disagreement(asked_of(mine), asked_of(led), name()));
    }
    RecordExchange round2(ctx_, scratch_, caller_stream_, kOp, number, where, sizeof(Verdict), 1);
    move_records(round2, sizeof(Verdict), {}, {{0, leader}}, comm, parent_stream,
                 "receiving the new communicator's id");
    round2.get(0, &verdict);
  }
  if (verdict.agreed == 0) {
    throw MismatchError(members_disagreement(asked_of(verdict.disagreeing), asked_of(led), name()));
  }
  // The new communicator, on its own stream, as a split's child.
  auto stream = std::make_shared<StreamContext>(ctx_->device(), ctx_->timeout(), ctx_->signal());
  auto child_ctx =
      std::make_shared<CommContext>(nullptr, stream, new_rank, static_cast<int>(ranks.size()),
                                    std::move(new_name), ctx_->timeout(), ctx_->signal());
  ncclConfig_t config = make_config(child_ctx->name());
  ncclComm_t child = nullptr;
  const std::string init = what + ": ncclCommInitRankConfig";
  const ncclResult_t rc = api().ncclCommInitRankConfig(&child, static_cast<int>(ranks.size()),
                                                       verdict.id, new_rank, &config);
  if (rc != ncclSuccess && rc != ncclInProgress) {
    if (child != nullptr) (void)api().ncclCommAbort(child);
    throw_nccl_error(rc, nullptr, init);
  }
  child_ctx->set_comm(child, new_rank, static_cast<int>(ranks.size()));
  child_ctx->wait_ready(init);  // aborts the comm itself on failure
  return adopt(std::move(stream), std::move(child_ctx));
}

}  // namespace twinccl::nccl
