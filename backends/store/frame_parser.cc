// Incremental request framing (see frame_parser.h).
#include "store/frame_parser.h"

#include <algorithm>
#include <utility>

namespace twinccl::store {

std::size_t FrameParser::feed(const std::uint8_t* data, std::size_t size) {
  if (state_ == State::complete || state_ == State::rejected) return 0;
  std::size_t used = 0;
  if (!header_done_) {
    const std::size_t n = std::min(size, header_.size() - header_have_);
    std::copy(data, data + n, header_.begin() + static_cast<std::ptrdiff_t>(header_have_));
    header_have_ += n;
    used += n;
    if (header_have_ > 0) state_ = State::partial;
    if (header_have_ < header_.size()) return used;
    auto header = decode_request(header_.data(), &why_);
    if (!header) {
      state_ = State::rejected;
      return used;
    }
    frame_.header = *header;
    header_done_ = true;
  }
  const std::size_t key_left = frame_.header.key_bytes - frame_.key.size();
  const std::size_t to_key = std::min(size - used, key_left);
  frame_.key.append(reinterpret_cast<const char*>(data + used), to_key);
  used += to_key;
  const std::size_t value_left = frame_.header.value_bytes - frame_.value.size();
  const std::size_t to_value = std::min(size - used, value_left);
  frame_.value.append(reinterpret_cast<const char*>(data + used), to_value);
  used += to_value;
  if (frame_.key.size() == frame_.header.key_bytes &&
      frame_.value.size() == frame_.header.value_bytes) {
    state_ = State::complete;
  }
  return used;
}

Frame FrameParser::take() {
  Frame out = std::move(frame_);
  frame_ = Frame{};
  header_have_ = 0;
  header_done_ = false;
  state_ = State::idle;
  return out;
}

}  // namespace twinccl::store
