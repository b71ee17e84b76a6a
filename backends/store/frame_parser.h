// Splits one client's byte stream into request frames, without sockets (the server feeds it what
// each read returned; the fuzz target feeds it arbitrary bytes).
//
//   FrameParser parser;
//   std::size_t used = parser.feed(bytes, n);             // stops at the end of a frame
//   if (parser.state() == FrameParser::State::complete) handle(parser.take());
//   if (parser.state() == FrameParser::State::rejected) close_connection(parser.why());
//
// How it works: the 13-byte header is collected first and checked (protocol.h); then the key
// and the value are appended as their bytes arrive. Nothing is sized from the header, so the
// memory a partial frame holds is what the client really sent (buffered_bytes()), never more
// than twice that (string growth), and never more than one frame's limits.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "store/protocol.h"

namespace twinccl::store {

struct Frame {
  RequestHeader header;
  std::string key;
  std::string value;
};

class FrameParser {
 public:
  enum class State : std::uint8_t {
    idle,      // between frames: no byte of the next frame yet
    partial,   // some bytes of a frame arrived
    complete,  // a whole frame waits in take()
    rejected,  // the header was refused; why() says why; feed() consumes nothing more
  };

  // Consumes bytes up to the end of the current frame and returns how many it used (fewer than
  // `size` when a frame completed or was rejected). Feeding a complete parser consumes nothing.
  std::size_t feed(const std::uint8_t* data, std::size_t size);

  State state() const { return state_; }
  // The complete frame; the parser is idle again afterwards.
  Frame take();
  const std::string& why() const { return why_; }
  // Bytes of the unfinished frame held in memory (header, key and value received so far).
  std::size_t buffered_bytes() const {
    return header_have_ + frame_.key.size() + frame_.value.size();
  }

 private:
  State state_ = State::idle;
  std::array<std::uint8_t, kRequestHeaderBytes> header_{};
  std::size_t header_have_ = 0;
  bool header_done_ = false;
  Frame frame_;
  std::string why_;
};

}  // namespace twinccl::store
