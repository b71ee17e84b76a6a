// The schedule path: one rank executes its steps of an algorithm's Schedule on real bytes.
//
// Pull model, as NCCL's P2P over NVLink: a send posts a pointer to the rank's data and the step
// does not end until the receiver consumed it; a recv reads the sender's memory directly and
// writes (or reduces into) its own. Each step: post sends, run local ops, consume recvs, wait for
// the sends to be consumed. Reading an `input` slice of a reducing collective reads the rank's
// contribution (Reduction::load), an op marked `finalize` applies the post-division. Its working
// memory (scratch, scaled blocks, a step's posted sends) is the rank's RankStaging, reused from
// call to call, and the schedule comes from the rank's cache (schedule_cache.h).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "executor.h"
#include "twinccl/errors.h"

namespace twinccl::emu {
namespace {

constexpr std::size_t kBlockBytes = 64 * 1024;

class RankExecutor {
 public:
  RankExecutor(const RankContext& ctx, const RankSchedule& schedule, const void* input,
               void* output, RankStaging& staging)
      : ctx_(ctx),
        schedule_(schedule),
        element_(size_of(ctx.dtype)),
        input_(static_cast<const char*>(input)),
        output_(static_cast<char*>(output)),
        block_elements_(std::max<std::size_t>(1, kBlockBytes / element_)),
        staging_(staging) {
    // Zeroed as a fresh buffer would be: a schedule never sees a previous call's bytes.
    std::size_t scratch_bytes = schedule.scratch_count * element_;
    grow(staging_.scratch, scratch_bytes);
    std::fill_n(staging_.scratch.begin(), scratch_bytes, char{0});
    if (scales()) {
      grow(staging_.tmp_a, kBlockBytes);
      grow(staging_.tmp_b, kBlockBytes);
    }
  }

  void run() {
    for (std::size_t s = 0; s < schedule_.steps.size(); ++s) run_step(s);
  }

  // Takes back whatever this rank posted and did not see consumed, so no peer reads freed memory.
  void withdraw_all(std::vector<Posted>& posted, const std::vector<int>& posted_to) {
    for (std::size_t i = 0; i < posted.size(); ++i)
      ctx_.meeting.exchange().withdraw(posted_to[i], posted[i]);
  }

 private:
  // Grow-only: a reused buffer keeps its capacity (RankCache::trim bounds it between calls).
  static void grow(std::vector<char>& v, std::size_t bytes) {
    if (v.size() < bytes) v.resize(bytes);
  }

  bool scales() const { return ctx_.reduction != nullptr && ctx_.reduction->scales_inputs(); }

  const char* address(const Slice& slice) const {
    switch (slice.buffer) {
      case BufferKind::input:
        return input_ + slice.offset * element_;
      case BufferKind::output:
        return output_ + slice.offset * element_;
      case BufferKind::scratch:
        return staging_.scratch.data() + slice.offset * element_;
    }
    return nullptr;
  }
  char* writable(const Slice& slice) {
    if (slice.buffer == BufferKind::input) fail_op("writes to the input buffer");
    return const_cast<char*>(address(slice));
  }

  [[noreturn]] void fail_op(const std::string& what) const {
    throw InternalError(ctx_.meeting.label() + ": rank " + std::to_string(ctx_.rank) + " step " +
                        std::to_string(step_) + ": schedule op " + what);
  }

  const Reduction& reduction() const {
    if (ctx_.reduction == nullptr) fail_op("reduces in a collective that does not reduce");
    return *ctx_.reduction;
  }

  // Pointer to `n` elements of `owner`'s data as contributed: scaled into `tmp` when needed.
  const char* contribution(int owner, const char* data, bool from_input, std::size_t n,
                           std::vector<char>& tmp) const {
    if (!from_input || !scales()) return data;
    ctx_.reduction->load(owner, tmp.data(), data, n);
    return tmp.data();
  }

  // dst = a (from a_owner) [op b (local)], block by block, with loads and finalize.
  void transfer(char* dst, int a_owner, const char* a, bool a_input, const char* b, bool b_input,
                std::size_t n, bool finalize) {
    for (std::size_t done = 0; done < n; done += block_elements_) {
      std::size_t len = std::min(block_elements_, n - done);
      std::size_t off = done * element_;
      const char* pa = contribution(a_owner, a + off, a_input, len, staging_.tmp_a);
      if (b == nullptr) {
        if (pa != dst + off) std::memmove(dst + off, pa, len * element_);
      } else {
        const char* pb = contribution(ctx_.rank, b + off, b_input, len, staging_.tmp_b);
        reduction().combine(dst + off, pa, pb, len);
      }
      if (finalize && ctx_.reduction != nullptr) ctx_.reduction->finalize(dst + off, len);
    }
  }

  std::string describe_wait(const StepOp& op, const char* verb) const {
    return ctx_.meeting.label() + ": rank " + std::to_string(ctx_.rank) + " step " +
           std::to_string(step_) + " " + verb + " rank " + std::to_string(op.peer);
  }

  void run_step(std::size_t s) {
    step_ = s;
    const Step& step = schedule_.steps[s];
    Exchange& ex = ctx_.meeting.exchange();
    // Reserved before the first post: a posted message must not move until it is consumed.
    std::size_t sends = 0;
    for (const StepOp& op : step.ops) sends += op.kind == StepOpKind::send ? 1 : 0;
    std::vector<Posted>& posted = staging_.posted;
    std::vector<int>& posted_to = staging_.posted_to;
    posted.clear();
    posted_to.clear();
    posted.reserve(sends);
    posted_to.reserve(sends);
    for (const StepOp& op : step.ops) {
      if (op.kind != StepOpKind::send) continue;
      Posted& message = posted.emplace_back();
      message.data = address(op.src);
      message.count = op.src.count;
      message.from_input = op.src.buffer == BufferKind::input;
      posted_to.push_back(op.peer);
      ex.post(ctx_.rank, op.peer, message);
    }
    try {
      run_local_and_recvs(step);
      for (std::size_t i = 0; i < posted.size(); ++i) {
        // Two words of captures: std::function keeps them without allocating.
        ex.wait_consumed(ctx_.rank, posted[i], [this, i] {
          return ctx_.meeting.label() + ": rank " + std::to_string(ctx_.rank) + " step " +
                 std::to_string(step_) + " waited for rank " +
                 std::to_string(staging_.posted_to[i]) + " to receive its data";
        });
      }
    } catch (const AbortedError&) {
      withdraw_all(posted, posted_to);
      throw;
    } catch (const std::exception& e) {
      ctx_.meeting.world->abort(ctx_.meeting.label() + ": rank " + std::to_string(ctx_.rank) +
                                " failed: " + e.what());
      withdraw_all(posted, posted_to);
      throw;
    }
  }

  struct Recv {
    char* dst = nullptr;
    const char* local = nullptr;  // recv_reduce's local operand
    bool local_input = false;
    bool finalize = false;
  };

  void run_local_and_recvs(const Step& step) {
    Exchange& ex = ctx_.meeting.exchange();
    for (const StepOp& op : step.ops) {
      switch (op.kind) {
        case StepOpKind::copy:
          transfer(writable(op.dst), ctx_.rank, address(op.src), op.src.buffer == BufferKind::input,
                   nullptr, false, op.dst.count, op.finalize);
          break;
        case StepOpKind::reduce:
          transfer(writable(op.dst), ctx_.rank, address(op.src), op.src.buffer == BufferKind::input,
                   address(op.src2), op.src2.buffer == BufferKind::input, op.dst.count,
                   op.finalize);
          break;
        default:
          break;
      }
    }
    for (const StepOp& op : step.ops) {
      if (op.kind != StepOpKind::recv && op.kind != StepOpKind::recv_reduce) continue;
      Recv recv;
      recv.dst = writable(op.dst);
      bool reduce = op.kind == StepOpKind::recv_reduce;
      recv.local = reduce ? address(op.src) : nullptr;
      recv.local_input = reduce && op.src.buffer == BufferKind::input;
      recv.finalize = op.finalize;
      // Two words of captures each: std::function keeps them without allocating.
      ex.consume(
          ctx_.rank, op.peer, op.dst.count,
          [this, &recv](const Posted& m) {
            transfer(recv.dst, m.sender, static_cast<const char*>(m.data), m.from_input, recv.local,
                     recv.local_input, m.count, recv.finalize);
          },
          [this, &op] { return describe_wait(op, "waited for data from"); });
    }
  }

  const RankContext& ctx_;
  const RankSchedule& schedule_;
  std::size_t element_;
  const char* input_;
  char* output_;
  std::size_t block_elements_;
  RankStaging& staging_;
  std::size_t step_ = 0;
};

}  // namespace

void execute_schedule(const RankContext& ctx, const RankSchedule& schedule, const void* input,
                      void* output) {
  if (ctx.staging != nullptr) {
    RankExecutor(ctx, schedule, input, output, *ctx.staging).run();
    return;
  }
  RankStaging own;
  RankExecutor(ctx, schedule, input, output, own).run();
}

}  // namespace twinccl::emu
