// One rank's checks of its own call, before anything is issued: every message names the call,
// the communicator, the rank, the call site and the bad value.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "twinccl/algorithms.h"
#include "twinccl/call_site_text.h"
#include "twinccl/errors.h"
#include "twinccl/op_traits.h"
#include "twinccl/operation.h"
#include "twinccl/reduction.h"

namespace twinccl {
namespace {

// Above every address a 64-bit Linux process can use: user space ends at 2^47 (x86-64, 4-level
// page tables), 2^56 (5-level) and at most 2^52 on arm64 (the kernel's
// Documentation/arch/x86/x86_64/mm.rst and Documentation/arch/arm64/memory.rst); CUDA's unified
// addresses live in the same space.
inline constexpr std::uintptr_t kAddressSpaceEnd = std::uintptr_t{1} << 57;

class Checker {
 public:
  Checker(const OpDesc& op, int rank, int nranks, std::string_view comm)
      : op_(op), rank_(rank), nranks_(nranks), comm_(comm) {}

  // "all_reduce on comm ..."; a piece of a convenience call in the user's words:
  // "all_gather's tensor_list[1] (a recv) on comm ...".
  [[noreturn]] void fail(const std::string& what) const {
    std::string call = op_.part_of.empty() ? std::string(name(op_.kind))
                                           : std::string(op_.part_of) + "'s " + op_.role + " (a " +
                                                 std::string(name(op_.kind)) + ")";
    throw InvalidArgument(call_site_text(call, comm_, rank_, op_.where) + ": " + what);
  }

  void check_rank_argument(const char* what, int value) const {
    if (value < 0 || value >= nranks_) {
      fail(std::string(what) + "=" + std::to_string(value) + " out of range [0, " +
           std::to_string(nranks_) + ")");
    }
  }

  void check_vector(const char* what, const std::vector<std::size_t>& v, bool may_be_empty) const {
    if (v.empty() && may_be_empty) return;
    if (v.size() != static_cast<std::size_t>(nranks_)) {
      fail(std::string(what) + " has " + std::to_string(v.size()) +
           " entries; the communicator has " + std::to_string(nranks_) + " ranks");
    }
  }

  // Bytes of `elements`, throwing on overflow.
  std::size_t bytes_of(std::size_t elements, const char* what) const {
    std::size_t element = size_of(op_.dtype);
    if (elements != 0 && element > ~std::size_t{0} / elements) {
      fail(std::string(what) + " of " + std::to_string(elements) + " elements of " +
           std::string(name(op_.dtype)) + " overflows size_t");
    }
    return elements * element;
  }

  void check_buffer(const char* what, const void* ptr, std::size_t elements,
                    std::size_t capacity) const {
    std::size_t bytes = bytes_of(elements, what);
    if (elements > 0 && ptr == nullptr) {
      fail(std::string(what) + " buffer is null but " + std::to_string(elements) +
           " elements are needed");
    }
    if (capacity != kUnknownCapacity && elements > capacity) {
      fail(std::string(what) + " buffer holds " + std::to_string(capacity) +
           " elements but the call needs " + std::to_string(elements));
    }
    // A range no process can hold: a count far too large (or a pointer near the top). Refused
    // here; before, a raw-pointer call with such a count reached memcpy and crashed (a one-rank
    // out-of-place call, a send/recv to oneself in a group).
    auto begin = reinterpret_cast<std::uintptr_t>(ptr);
    if (elements > 0 && (bytes > kAddressSpaceEnd || begin > kAddressSpaceEnd - bytes)) {
      fail(std::string(what) + " buffer at " + address_text(begin) + " with " +
           std::to_string(elements) + " elements of " + std::string(name(op_.dtype)) + " (" +
           std::to_string(bytes) +
           " bytes) would end past the end of the address space (2^57 bytes): the count (or the "
           "pointer) is wrong");
    }
  }

  // Out-of-place buffers must not overlap (NCCL's rule); in place is allowed at the exact offset.
  void check_overlap(std::size_t send_n, std::size_t recv_n) const {
    if (send_n == 0 || recv_n == 0 || op_.send == nullptr || op_.recv == nullptr) return;
    if (traits(op_.kind).in_place == InPlace::never && op_.send == op_.recv) {  // all_to_all(_v)
      fail("in-place all_to_all is not supported (send and recv are the same buffer)");
    }
    if (is_in_place(op_, rank_)) return;
    auto s = reinterpret_cast<std::uintptr_t>(op_.send);
    auto r = reinterpret_cast<std::uintptr_t>(op_.recv);
    std::size_t sb = send_n * size_of(op_.dtype), rb = recv_n * size_of(op_.dtype);
    if (s < r + rb && r < s + sb) {
      fail("send buffer at " + address_text(s) + " (" + elements(send_n) + " of " +
           std::string(name(op_.dtype)) + ") and recv buffer at " + address_text(r) + " (" +
           elements(recv_n) + ") overlap but the call is not in place by NCCL's rules" +
           in_place_rule(s, r));
    }
  }

  // Uneven calls with explicit recv displacements: two ranks' blocks must not overlap (MPI's rule
  // for *v collectives; the emulator would have two threads write the same bytes, in no order).
  void check_recv_blocks() const {
    if (op_.recv_displs.empty()) return;  // packed: disjoint by construction
    struct Block {
      std::size_t begin, end;
      int rank;
    };
    std::vector<Block> blocks;
    for (std::size_t r = 0; r < op_.recv_counts.size(); ++r) {
      if (op_.recv_counts[r] == 0) continue;  // extent() already refused an overflowing end
      blocks.push_back(
          {op_.recv_displs[r], op_.recv_displs[r] + op_.recv_counts[r], static_cast<int>(r)});
    }
    std::sort(blocks.begin(), blocks.end(),
              [](const Block& a, const Block& b) { return a.begin < b.begin; });
    for (std::size_t i = 1; i < blocks.size(); ++i) {
      const Block &a = blocks[i - 1], &b = blocks[i];
      if (b.begin < a.end) {
        fail("recv_displs place rank " + std::to_string(a.rank) + "'s block [" +
             std::to_string(a.begin) + ", " + std::to_string(a.end) + ") and rank " +
             std::to_string(b.rank) + "'s block [" + std::to_string(b.begin) + ", " +
             std::to_string(b.end) +
             ") over each other in recv (elements); blocks must not overlap");
      }
    }
  }

  static std::string elements(std::size_t n) {
    return std::to_string(n) + (n == 1 ? " element" : " elements");
  }

  // "+ 8 elements" (or "+ 6 bytes" when the distance is not a whole number of elements).
  std::string offset(std::uintptr_t from, std::uintptr_t to) const {
    std::size_t element = size_of(op_.dtype);
    std::string sign = to >= from ? "+ " : "- ";
    std::uintptr_t d = to >= from ? to - from : from - to;
    if (d % element == 0) return sign + elements(d / element);
    return sign + std::to_string(d) + " bytes (not a whole number of " +
           std::string(name(op_.dtype)) + " elements)";
  }

  // "; in place needs recv == send + rank*count = send + 24 elements, recv is at send + 8 elements"
  std::string in_place_rule(std::uintptr_t s, std::uintptr_t r) const {
    std::size_t want = static_cast<std::size_t>(rank_) * op_.count;
    if (is_uneven(op_.kind)) return "";
    switch (traits(op_.kind).in_place) {
      case InPlace::same:
        return "; in place needs recv == send, recv is at send " + offset(s, r);
      case InPlace::recv_in_send:
        return "; in place needs recv == send + rank*count = send + " + elements(want) +
               ", recv is at send " + offset(s, r);
      case InPlace::send_in_recv:
        return "; in place needs send == recv + rank*count = recv + " + elements(want) +
               ", send is at recv " + offset(r, s);
      case InPlace::never:
        break;
    }
    return "";
  }

  void run() const {
    if (name(op_.kind) == "invalid")
      fail("operation kind " + std::to_string(static_cast<int>(op_.kind)) + " is not valid");
    if (!is_valid(op_.dtype))
      fail("data type " + std::to_string(static_cast<int>(op_.dtype)) + " is not valid");
    if (nranks_ <= 0 || rank_ < 0 || rank_ >= nranks_) fail("rank outside the communicator");
    if (is_rooted(op_.kind)) check_rank_argument("root", op_.root);
    if (is_p2p(op_.kind)) check_rank_argument("peer", op_.peer);
    // A forced algorithm must exist for this operation (send/recv have none): refused here, on
    // every backend, naming the call, instead of deep in the emulator's executor (or never).
    if (!op_.algorithm.empty()) {
      try {
        find_algorithm(op_.kind, op_.algorithm);
      } catch (const InvalidArgument& e) {
        fail(std::string("CallOptions.algorithm: ") + e.what());
      }
    }
    if (is_reducing(op_.kind)) {
      try {
        check_reduce_op_supported(op_.dtype, op_.op);
      } catch (const InvalidArgument& e) {
        fail(e.what());
      }
    }
    for (Side side : {Side::input, Side::output}) {  // the uneven variants' counts and displs
      if (!rule_of(traits(op_.kind), side).holds(Elements::blocks)) continue;
      const BlockVectors b = block_vectors(op_, side);
      check_vector(b.counts_name, b.counts, false);
      check_vector(b.displs_name, b.displs, true);
    }
    std::size_t send_n = 0, recv_n = 0;
    try {
      send_n = send_elements(op_, rank_, nranks_);
      recv_n = recv_elements(op_, rank_, nranks_);
    } catch (const InvalidArgument& e) {
      fail(e.what());
    }
    check_buffer("send", op_.send, send_n, op_.send_capacity);
    check_buffer("recv", op_.recv, recv_n, op_.recv_capacity);
    check_overlap(send_n, recv_n);
    bool root_receives = op_.kind != OpKind::gather_v || rank_ == op_.root;
    if (is_uneven(op_.kind) && root_receives) check_recv_blocks();
  }

 private:
  const OpDesc& op_;
  int rank_;
  int nranks_;
  std::string_view comm_;
};

}  // namespace

void validate(const OpDesc& op, int rank, int nranks, std::string_view comm_name) {
  Checker(op, rank, nranks, comm_name).run();
}

}  // namespace twinccl
