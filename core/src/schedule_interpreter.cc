// Single-threaded schedule executor (see schedule_interpreter.h): every operation reads its
// sources into a temporary, computes, then writes its destination, so aliasing never matters.
#include "twinccl/schedule_interpreter.h"

#include <cstring>
#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "twinccl/errors.h"

namespace twinccl {
namespace {

using Bytes = std::vector<std::byte>;

class Interpreter {
 public:
  Interpreter(const Schedule& s, DataType dtype, const Reduction* reduction,
              std::span<const RankBuffers> buffers)
      : s_(s), reduction_(reduction), buffers_(buffers), esize_(size_of(dtype)) {
    const auto n = static_cast<std::size_t>(s.spec.nranks);
    if (buffers.size() != n || s.ranks.size() != n) {
      throw InvalidArgument("interpret_schedule: schedule '" + s.algorithm + "' for " +
                            std::to_string(n) + " ranks has " + std::to_string(s.ranks.size()) +
                            " rank schedules and got " + std::to_string(buffers.size()) +
                            " rank buffers");
    }
    if (s.spec.reducing() && reduction == nullptr) {
      throw InvalidArgument("interpret_schedule: " + std::string(name(s.spec.kind)) +
                            " reduces but no Reduction was given");
    }
    scratch_.resize(n);
    for (std::size_t r = 0; r < n; ++r) scratch_[r].resize(s.ranks[r].scratch_count * esize_);
    step_.assign(n, 0);
    posted_.assign(n, false);
  }

  void run() {
    const int n = s_.spec.nranks;
    for (bool progress = true; progress;) {
      progress = false;
      for (int r = 0; r < n; ++r) {
        while (advance(r)) progress = true;
      }
    }
    std::string stuck;
    for (int r = 0; r < n; ++r) {
      const auto ri = static_cast<std::size_t>(r);
      if (step_[ri] == s_.ranks[ri].steps.size()) continue;
      stuck += (stuck.empty() ? "" : "; ") + std::string("rank ") + std::to_string(r) +
               " at step " + std::to_string(step_[ri]) + " waits for rank(s)";
      for (const StepOp& o : s_.ranks[ri].steps[step_[ri]].ops) {
        if (is_recv(o)) stuck += " " + std::to_string(o.peer);
      }
    }
    if (!stuck.empty()) fail("is stuck: " + stuck);
    for (const auto& [pair, queue] : messages_) {
      if (!queue.empty()) {
        fail("rank " + std::to_string(pair.first) + " sent " + std::to_string(queue.size()) +
             " message(s) rank " + std::to_string(pair.second) + " never received");
      }
    }
  }

 private:
  static bool is_recv(const StepOp& o) {
    return o.kind == StepOpKind::recv || o.kind == StepOpKind::recv_reduce;
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw InternalError("interpret_schedule: schedule '" + s_.algorithm + "' for " +
                        std::string(name(s_.spec.kind)) + " " + what);
  }

  // Runs rank r's current step if it can; true when it moved on.
  bool advance(int r) {
    const auto ri = static_cast<std::size_t>(r);
    if (step_[ri] >= s_.ranks[ri].steps.size()) return false;
    const Step& step = s_.ranks[ri].steps[step_[ri]];
    if (!posted_[ri]) {
      for (const StepOp& o : step.ops) {
        if (o.kind == StepOpKind::send) messages_[{r, o.peer}].push_back(read(r, o.src));
      }
      posted_[ri] = true;
    }
    std::map<int, std::size_t> wanted;
    for (const StepOp& o : step.ops) {
      if (is_recv(o)) ++wanted[o.peer];
    }
    for (const auto& [peer, count] : wanted) {
      if (messages_[{peer, r}].size() < count) return false;
    }
    for (const StepOp& o : step.ops) execute(r, o);
    posted_[ri] = false;
    ++step_[ri];
    return true;
  }

  void execute(int r, const StepOp& o) {
    const std::size_t bytes = o.dst.count * esize_;
    Bytes result;
    switch (o.kind) {
      case StepOpKind::send:
        return;
      case StepOpKind::recv:
        result = take(r, o.peer, bytes);
        break;
      case StepOpKind::recv_reduce: {
        const Bytes peer = take(r, o.peer, bytes);
        const Bytes local = read(r, o.src);
        result.resize(bytes);
        reduction_->combine(result.data(), peer.data(), local.data(), o.dst.count);
        break;
      }
      case StepOpKind::copy:
        result = read(r, o.src);
        break;
      case StepOpKind::reduce: {
        const Bytes a = read(r, o.src);
        const Bytes b = read(r, o.src2);
        result.resize(bytes);
        reduction_->combine(result.data(), a.data(), b.data(), o.dst.count);
        break;
      }
    }
    if (result.size() != bytes) fail("rank " + std::to_string(r) + ": operand size mismatch");
    if (o.dst.buffer == BufferKind::input) {
      fail("rank " + std::to_string(r) + " writes its input buffer (inputs are read-only)");
    }
    std::byte* dst = address(r, o.dst);
    if (bytes > 0) std::memmove(dst, result.data(), bytes);
    if (o.finalize && reduction_ != nullptr) reduction_->finalize(dst, o.dst.count);
  }

  Bytes take(int r, int peer, std::size_t bytes) {
    auto& queue = messages_[{peer, r}];
    Bytes message = std::move(queue.front());
    queue.pop_front();
    if (message.size() != bytes) {
      fail("rank " + std::to_string(r) + " expected " + std::to_string(bytes / esize_) +
           " elements from rank " + std::to_string(peer) + " and got " +
           std::to_string(message.size() / esize_));
    }
    return message;
  }

  Bytes read(int r, const Slice& slice) {
    Bytes data(slice.count * esize_);
    if (data.empty()) return data;
    const std::byte* src = address(r, slice);
    if (slice.buffer == BufferKind::input && s_.spec.reducing()) {
      reduction_->load(r, data.data(), src, slice.count);
    } else {
      std::memcpy(data.data(), src, data.size());
    }
    return data;
  }

  std::byte* address(int r, const Slice& slice) {
    const auto ri = static_cast<std::size_t>(r);
    std::size_t limit = 0;
    std::byte* base = nullptr;
    switch (slice.buffer) {
      case BufferKind::input:
        limit = input_elements(s_.spec, r);
        // Sources only: the interpreter never writes through an input slice.
        base = const_cast<std::byte*>(static_cast<const std::byte*>(buffers_[ri].input));
        break;
      case BufferKind::output:
        limit = output_elements(s_.spec, r);
        base = static_cast<std::byte*>(buffers_[ri].output);
        break;
      case BufferKind::scratch:
        limit = s_.ranks[ri].scratch_count;
        base = scratch_[ri].data();
        break;
    }
    if (slice.offset > limit || slice.count > limit - slice.offset) {
      fail("rank " + std::to_string(r) + " uses elements [" + std::to_string(slice.offset) + ", " +
           std::to_string(slice.offset + slice.count) + ") of a buffer of " +
           std::to_string(limit));
    }
    if (base == nullptr && slice.count > 0) {
      throw InvalidArgument("interpret_schedule: rank " + std::to_string(r) +
                            " has a null buffer where its schedule reads or writes " +
                            std::to_string(slice.count) + " elements");
    }
    return base + slice.offset * esize_;
  }

  const Schedule& s_;
  const Reduction* reduction_;
  std::span<const RankBuffers> buffers_;
  std::size_t esize_;
  std::vector<Bytes> scratch_;
  std::vector<std::size_t> step_;
  std::vector<bool> posted_;
  std::map<std::pair<int, int>, std::deque<Bytes>> messages_;
};

}  // namespace

void interpret_schedule(const Schedule& schedule, DataType dtype, const Reduction* reduction,
                        std::span<const RankBuffers> buffers) {
  Interpreter(schedule, dtype, reduction, buffers).run();
}

}  // namespace twinccl
