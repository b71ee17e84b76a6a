// Buffers shared across ranks: in the emulator every rank is a thread of one process, so two
// ranks can pass the same memory (one array captured by every rank's closure). On GPUs each
// rank's buffers are its own device memory, so such a program is always wrong; here it would
// silently give algorithm-dependent results. The last rank to arrive at a collective looks for
// it once for everyone, before any byte is written; every rank then throws InvalidArgument.
//
//   SharedBuffers found = find_shared_buffers(meeting.ops, nranks, scratch);
//   if (found) throw InvalidArgument(shared_buffers_text(label, meeting.ops, nranks, found));
//
// How it works: each rank contributes its output byte range (what it writes) and its input
// range (what it reads). Outputs must be pairwise disjoint across ranks: sorted by start, any
// overlap shows between neighbours. Inputs may overlap each other (equal read-only copies on
// GPUs) and their own rank's output (in place, checked by validate()), but no other rank's
// output: with the outputs sorted and disjoint, a binary search finds the (at most two) outputs
// an input can meet. O(n log n) per call, allocation-free once `scratch` is warm.
#pragma once

#include <cstddef>
#include <cstdint>
#include <source_location>
#include <string>
#include <vector>

#include "twinccl/operation.h"

namespace twinccl::emu {

struct ByteRange {
  std::uintptr_t begin = 0;
  std::uintptr_t end = 0;  // one past the last byte
  int rank = -1;
  bool output = false;
};

// The first overlap found: `writer`'s output overlaps `other`'s input or output.
struct SharedBuffers {
  ByteRange writer;
  ByteRange other;
  explicit operator bool() const { return writer.rank >= 0; }
};

// The ranges rank `rank` of `nranks` reads and writes in `op` (empty ranges when it uses none).
ByteRange input_range(const OpDesc& op, int rank, int nranks);
ByteRange output_range(const OpDesc& op, int rank, int nranks);

// ops[r]: rank r's call. Never throws (an op whose sizes cannot be computed takes no part).
SharedBuffers find_shared_buffers(const std::vector<OpDesc>& ops, int nranks,
                                  std::vector<ByteRange>& scratch) noexcept;

// "all_reduce #3 on comm 'world': rank 1 (a.cc:9) writes its output (recvbuf 0x..+0, 64 bytes)
// over memory rank 0 (a.cc:9) also passed as its output ...; nothing was written".
std::string shared_buffers_text(const std::string& label, const std::vector<OpDesc>& ops,
                                const SharedBuffers& found);

// The same for a user send/recv pair: the recv's buffer overlaps the matching send's buffer.
std::string shared_p2p_text(const std::string& comm, int sender, const void* send_data,
                            std::size_t bytes, std::source_location send_where, int receiver,
                            const void* recv_data, std::source_location recv_where);

inline bool overlaps(std::uintptr_t a, std::size_t a_bytes, std::uintptr_t b, std::size_t b_bytes) {
  return a_bytes > 0 && b_bytes > 0 && a < b + b_bytes && b < a + a_bytes;
}

}  // namespace twinccl::emu
