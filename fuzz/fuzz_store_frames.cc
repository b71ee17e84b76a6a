// Fuzz target: the bootstrap store server's frame parser and state machine, fed one client's
// byte stream in memory (no sockets). The stream is cut into reads of cycling sizes (1, 7, 13,
// 64, 4096 bytes) as a socket might deliver it; every complete frame is served by ServerState,
// get/wait of a missing key parks a stand-in waiter. Checked after every step: a rejected header
// stops the stream (the server closes that connection); an unfinished frame never holds more
// than one frame's limits; refusals carry a bounded message; stored bytes stay under the cap and
// equal the sum of keys and values; a woken waiter gets a value.
//
//   fuzz_store_frames --seconds 8 fuzz/corpus/store_frames
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "fuzz_support.h"
#include "store/frame_parser.h"
#include "store/server_state.h"

namespace {

using twinccl::store::FrameParser;

constexpr std::size_t kCapBytes = 4096;  // small, so that full stores are reached

[[noreturn]] void finding(const char* what) {
  std::fprintf(stderr, "fuzz_store_frames: %s\n", what);
  std::abort();
}

class StandInWaiter : public twinccl::store::Waiter {
 public:
  void key_arrived(const twinccl::store::Value& value) override {
    if (!value) finding("a parked waiter was woken without a value");
    ++woken;
  }
  int woken = 0;
};

void check_state(const twinccl::store::ServerState& state) {
  std::size_t sum = 0;
  for (const auto& [key, value] : state.values()) sum += key.size() + value->size();
  if (sum != state.stored_bytes()) finding("stored_bytes differs from the keys and values held");
  if (sum > kCapBytes) finding("stored bytes passed the cap");
}

void run(const std::uint8_t* data, std::size_t size) {
  static constexpr std::size_t kReadSizes[] = {1, 7, 13, 64, 4096};
  twinccl::store::ServerState state(kCapBytes);
  FrameParser parser;
  std::vector<std::shared_ptr<StandInWaiter>> parked;
  std::size_t offset = 0;
  for (std::size_t read = 0; offset < size; ++read) {
    const std::size_t end = std::min(size, offset + kReadSizes[read % 5]);
    while (offset < end) {
      offset += parser.feed(data + offset, end - offset);
      if (parser.buffered_bytes() > twinccl::store::kRequestHeaderBytes +
                                        twinccl::store::kMaxKeyBytes +
                                        twinccl::store::kMaxValueBytes) {
        finding("an unfinished frame holds more than one frame's limits");
      }
      if (parser.state() == FrameParser::State::rejected) {
        if (parser.why().empty() || parser.why().size() > twinccl::fuzz::max_message_bytes) {
          finding("a rejected header without a bounded reason");
        }
        return;  // the server closes the connection here
      }
      if (parser.state() != FrameParser::State::complete) continue;
      const twinccl::store::Frame frame = parser.take();
      const twinccl::store::Outcome out = state.handle(frame);
      if (out.park) {
        parked.push_back(std::make_shared<StandInWaiter>());
        state.park(frame.key, parked.back());
      } else if (out.status != twinccl::store::Status::ok &&
                 (!out.value || out.value->empty() ||
                  out.value->size() > twinccl::fuzz::max_message_bytes)) {
        finding("a refusal without a bounded message");
      }
      check_state(state);
    }
  }
  if (parser.state() == FrameParser::State::complete) finding("a complete frame was left unserved");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  return twinccl::fuzz::expect_typed_errors([&] { run(data, size); });
}
