// The schedule path: one rank executes its steps of an algorithm's Schedule on real bytes.
//
// Pull model, as NCCL's P2P over NVLink: a send posts a pointer to the rank's data and the step
// does not end until the receiver consumed it; a recv reads the sender's memory directly and
// writes (or reduces into) its own. Each step: post sends, run local ops, consume recvs, wait for
// the sends to be consumed. Reading an `input` slice of a reducing collective reads the rank's
// contribution (Reduction::load), an op marked `finalize` applies the post-division.
#include <cstring>
#include <deque>
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
               void* output)
      : ctx_(ctx),
        schedule_(schedule),
        element_(size_of(ctx.dtype)),
        input_(static_cast<const char*>(input)),
        output_(static_cast<char*>(output)),
        scratch_(schedule.scratch_count * element_),
        block_elements_(std::max<std::size_t>(1, kBlockBytes / element_)),
        tmp_a_(kBlockBytes),
        tmp_b_(kBlockBytes) {}

  void run() {
    for (std::size_t s = 0; s < schedule_.steps.size(); ++s) run_step(s);
  }

  // Takes back whatever this rank posted and did not see consumed, so no peer reads freed memory.
  void withdraw_all(std::deque<Posted>& posted, const std::vector<int>& posted_to) {
    for (std::size_t i = 0; i < posted.size(); ++i)
      ctx_.meeting.exchange().withdraw(posted_to[i], posted[i]);
  }

 private:
  bool scales() const { return ctx_.reduction != nullptr && ctx_.reduction->scales_inputs(); }

  const char* address(const Slice& slice) const {
    switch (slice.buffer) {
      case BufferKind::input:
        return input_ + slice.offset * element_;
      case BufferKind::output:
        return output_ + slice.offset * element_;
      case BufferKind::scratch:
        return scratch_.data() + slice.offset * element_;
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
      const char* pa = contribution(a_owner, a + off, a_input, len, tmp_a_);
      if (b == nullptr) {
        if (pa != dst + off) std::memmove(dst + off, pa, len * element_);
      } else {
        const char* pb = contribution(ctx_.rank, b + off, b_input, len, tmp_b_);
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
    std::deque<Posted> posted;
    std::vector<int> posted_to;
    for (const StepOp& op : step.ops) {
      if (op.kind != StepOpKind::send) continue;
      Posted& message = posted.emplace_back();
      message.data = address(op.src);
      message.count = op.src.count;
      message.from_input = op.src.buffer == BufferKind::input;
      posted_to.push_back(op.peer);
      ex.post(ctx_.rank, op.peer, posted.back());
    }
    try {
      run_local_and_recvs(step);
      for (std::size_t i = 0; i < posted.size(); ++i) {
        ex.wait_consumed(ctx_.rank, posted[i], [&] {
          return ctx_.meeting.label() + ": rank " + std::to_string(ctx_.rank) + " step " +
                 std::to_string(step_) + " waited for rank " + std::to_string(posted_to[i]) +
                 " to receive its data";
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
      char* dst = writable(op.dst);
      bool reduce = op.kind == StepOpKind::recv_reduce;
      const char* local = reduce ? address(op.src) : nullptr;
      bool local_input = reduce && op.src.buffer == BufferKind::input;
      ex.consume(
          ctx_.rank, op.peer, op.dst.count,
          [&](const Posted& m) {
            transfer(dst, m.sender, static_cast<const char*>(m.data), m.from_input, local,
                     local_input, m.count, op.finalize);
          },
          [&] { return describe_wait(op, "waited for data from"); });
    }
  }

  const RankContext& ctx_;
  const RankSchedule& schedule_;
  std::size_t element_;
  const char* input_;
  char* output_;
  std::vector<char> scratch_;
  std::size_t block_elements_;
  std::vector<char> tmp_a_, tmp_b_;
  std::size_t step_ = 0;
};

}  // namespace

void execute_schedule(const RankContext& ctx, const RankSchedule& schedule, const void* input,
                      void* output) {
  RankExecutor(ctx, schedule, input, output).run();
}

}  // namespace twinccl::emu
