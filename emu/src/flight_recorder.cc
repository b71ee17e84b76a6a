// FlightRecorder: per-rank rings of the last operations, and their JSON dump.
#include "flight_recorder.h"

#include <algorithm>

namespace twinccl::emu {
namespace {

void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          static constexpr char kHex[] = "0123456789abcdef";
          out += "\\u00";
          out += kHex[(c >> 4) & 0xf];
          out += kHex[c & 0xf];
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

}  // namespace

std::string_view state_name(OpState state) {
  switch (state) {
    case OpState::scheduled:
      return "scheduled";
    case OpState::started:
      return "started";
    case OpState::completed:
      return "completed";
    case OpState::failed:
      return "failed";
  }
  return "invalid";
}

FlightRecorder::FlightRecorder(int ranks, std::size_t ops_per_rank)
    : capacity_(std::max<std::size_t>(1, ops_per_rank)) {
  rings_.reserve(static_cast<std::size_t>(ranks));
  for (int r = 0; r < ranks; ++r) {
    rings_.push_back(std::make_unique<Ring>());
    rings_.back()->entries.resize(capacity_);
  }
}

std::uint64_t FlightRecorder::scheduled(int rank, const OpRecord& op) {
  Ring& ring = *rings_[static_cast<std::size_t>(rank)];
  std::lock_guard<std::mutex> lock(ring.mu);
  std::uint64_t id = ++ring.next_id;
  Entry& e = ring.entries[id % capacity_];
  e.id = id;
  e.comm.assign(op.comm);  // reuses the slot's capacity
  e.op = op;
  e.op.comm = {};
  e.state = OpState::scheduled;
  return id;
}

void FlightRecorder::set_state(int rank, std::uint64_t id, OpState state) {
  Ring& ring = *rings_[static_cast<std::size_t>(rank)];
  std::lock_guard<std::mutex> lock(ring.mu);
  Entry& e = ring.entries[id % capacity_];
  if (e.id == id) e.state = state;
}

std::string FlightRecorder::describe(const Entry& e) {
  std::string text = std::string(twinccl::name(e.op.kind));
  if (is_p2p(e.op.kind)) {
    text += std::string(e.op.kind == OpKind::send ? " to" : " from") + " rank " +
            std::to_string(e.op.peer);
  } else {
    text += " #" + std::to_string(e.op.seq);
  }
  return text + " on comm '" + e.comm + "' (" + describe_call_site(e.op.where) + "), " +
         std::string(state_name(e.state));
}

std::string FlightRecorder::latest(int rank) const {
  const Ring& ring = *rings_[static_cast<std::size_t>(rank)];
  std::lock_guard<std::mutex> lock(ring.mu);
  if (ring.next_id == 0) return "";
  return describe(ring.entries[ring.next_id % capacity_]);
}

std::string FlightRecorder::json() const {
  std::string out = "{\"ops_per_rank\": " + std::to_string(capacity_) + ", \"ranks\": [";
  for (std::size_t r = 0; r < rings_.size(); ++r) {
    const Ring& ring = *rings_[r];
    std::lock_guard<std::mutex> lock(ring.mu);
    out += (r ? ", " : "") + std::string("{\"rank\": ") + std::to_string(r) + ", \"operations\": [";
    std::uint64_t first = ring.next_id >= capacity_ ? ring.next_id - capacity_ + 1 : 1;
    for (std::uint64_t id = first; id <= ring.next_id; ++id) {
      const Entry& e = ring.entries[id % capacity_];
      out += id == first ? "{" : ", {";
      out += "\"id\": " + std::to_string(e.id) + ", \"comm\": ";
      append_json_string(out, e.comm);
      out += ", \"seq\": " + std::to_string(e.op.seq) + ", \"op\": \"" +
             std::string(twinccl::name(e.op.kind)) +
             "\", \"count\": " + std::to_string(e.op.count) + ", \"dtype\": \"" +
             std::string(twinccl::name(e.op.dtype)) + "\", \"peer\": " + std::to_string(e.op.peer) +
             ", \"root\": " + std::to_string(e.op.root) +
             ", \"async\": " + (e.op.async_op ? "true" : "false") + ", \"where\": ";
      append_json_string(out, describe_call_site(e.op.where));
      out += ", \"state\": \"" + std::string(state_name(e.state)) + "\"}";
    }
    out += "]}";
  }
  return out + "]}";
}

}  // namespace twinccl::emu
