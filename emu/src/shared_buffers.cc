#include "shared_buffers.h"

#include <algorithm>
#include <cstdio>
#include <span>

#include "twinccl/call_site_text.h"

namespace twinccl::emu {
namespace {

std::string bytes_text(std::uintptr_t n) {
  return std::to_string(n) + (n == 1 ? " byte" : " bytes");
}

ByteRange range(const void* data, std::size_t elements, DataType dtype, int rank, bool output) {
  ByteRange r;
  r.rank = rank;
  r.output = output;
  if (data == nullptr || elements == 0) return r;
  r.begin = reinterpret_cast<std::uintptr_t>(data);
  std::size_t bytes = elements * size_of(dtype);  // validate() checked it does not overflow
  r.end = r.begin + bytes;
  return r;
}

// "rank 1's output (recvbuf at 0x1000, 64 bytes; a.cc:9)"
std::string side_text(const ByteRange& r, const OpDesc& op) {
  return "rank " + std::to_string(r.rank) + "'s " +
         (r.output ? "output (recvbuf" : "input (sendbuf") + " at " + address_text(r.begin) + ", " +
         bytes_text(r.end - r.begin) + "; " + describe_call_site(op.where) + ")";
}

}  // namespace

ByteRange input_range(const OpDesc& op, int rank, int nranks) {
  return range(op.send, send_elements(op, rank, nranks), op.dtype, rank, false);
}

ByteRange output_range(const OpDesc& op, int rank, int nranks) {
  return range(op.recv, recv_elements(op, rank, nranks), op.dtype, rank, true);
}

SharedBuffers find_shared_buffers(const std::vector<OpDesc>& ops, int nranks,
                                  std::vector<ByteRange>& scratch) noexcept {
  SharedBuffers found;
  if (nranks < 2 || ops.empty() || ops.front().kind == OpKind::barrier) return found;
  try {
    scratch.clear();
    scratch.reserve(2 * static_cast<std::size_t>(nranks));
    for (int r = 0; r < nranks; ++r) {
      ByteRange out = output_range(ops[static_cast<std::size_t>(r)], r, nranks);
      if (out.begin != out.end) scratch.push_back(out);
    }
    auto outputs_end = static_cast<std::ptrdiff_t>(scratch.size());
    for (int r = 0; r < nranks; ++r) {
      ByteRange in = input_range(ops[static_cast<std::size_t>(r)], r, nranks);
      if (in.begin != in.end) scratch.push_back(in);
    }
    auto outputs = std::span<ByteRange>(scratch.data(), static_cast<std::size_t>(outputs_end));
    std::sort(outputs.begin(), outputs.end(),
              [](const ByteRange& a, const ByteRange& b) { return a.begin < b.begin; });
    // One output per rank: any two that overlap belong to two ranks.
    std::size_t widest = 0;  // the output reaching furthest so far
    for (std::size_t i = 1; i < outputs.size(); ++i) {
      if (outputs[i].begin < outputs[widest].end) {
        found.writer = outputs[widest];
        found.other = outputs[i];
        return found;
      }
      if (outputs[i].end > outputs[widest].end) widest = i;
    }
    // Outputs are now disjoint and sorted (their ends too): each input meets at most its own
    // rank's output and then one more.
    for (std::size_t k = outputs.size(); k < scratch.size(); ++k) {
      const ByteRange& in = scratch[k];
      auto it = std::upper_bound(
          outputs.begin(), outputs.end(), in.begin,
          [](std::uintptr_t address, const ByteRange& out) { return address < out.end; });
      for (; it != outputs.end() && it->begin < in.end; ++it) {
        if (it->rank == in.rank) continue;  // in place (or a same-rank overlap validate() judged)
        found.writer = *it;
        found.other = in;
        return found;
      }
    }
  } catch (...) {  // sizes validate() refuses, or no memory for the scratch: not judged here
    return SharedBuffers{};
  }
  return found;
}

std::string shared_buffers_text(const std::string& label, const std::vector<OpDesc>& ops,
                                const SharedBuffers& found) {
  const ByteRange& w = found.writer;
  const ByteRange& o = found.other;
  std::uintptr_t from = std::max(w.begin, o.begin);
  std::uintptr_t to = std::min(w.end, o.end);
  return label + ": ranks " + std::to_string(w.rank) + " and " + std::to_string(o.rank) +
         " share memory: " + side_text(w, ops[static_cast<std::size_t>(w.rank)]) + " overlaps " +
         side_text(o, ops[static_cast<std::size_t>(o.rank)]) + " in " + bytes_text(to - from) +
         " (offset " + std::to_string(from - w.begin) + " of rank " + std::to_string(w.rank) +
         "'s recvbuf, offset " + std::to_string(from - o.begin) + " of rank " +
         std::to_string(o.rank) + "'s " + (o.output ? "recvbuf" : "sendbuf") +
         "). On GPUs each rank's buffers are its own device memory; here ranks are threads of "
         "one process, so one array used by several ranks (a variable every rank's function "
         "captures) makes them write the same bytes. Give each rank its own output buffers "
         "(inputs only read may be shared). Nothing was written";
}

std::string shared_p2p_text(const std::string& comm, int sender, const void* send_data,
                            std::size_t bytes, std::source_location send_where, int receiver,
                            const void* recv_data, std::source_location recv_where) {
  auto s = reinterpret_cast<std::uintptr_t>(send_data);
  auto r = reinterpret_cast<std::uintptr_t>(recv_data);
  std::uintptr_t from = std::max(s, r);
  std::uintptr_t to = std::min(s + bytes, r + bytes);
  return "send/recv on comm '" + comm + "': ranks " + std::to_string(sender) + " and " +
         std::to_string(receiver) + " share memory: rank " + std::to_string(receiver) +
         "'s recv buffer (at " + address_text(r) + ", " + bytes_text(bytes) + "; " +
         describe_call_site(recv_where) + ") overlaps rank " + std::to_string(sender) +
         "'s send buffer (at " + address_text(s) + ", " + bytes_text(bytes) + "; " +
         describe_call_site(send_where) + ") in " + bytes_text(to - from) + " (offset " +
         std::to_string(from - r) + " of the recv buffer, offset " + std::to_string(from - s) +
         " of the send buffer). On GPUs the two are different devices' memory; here ranks are "
         "threads of one process, so the receive would overwrite the sender's own data. Give "
         "each rank its own buffers. Nothing was written";
}

}  // namespace twinccl::emu
