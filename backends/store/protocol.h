// The bootstrap store's wire format, shared by the server and the client.
//
// How it works: every request is one frame, a fixed 13-byte header then the key and the value;
// every reply is a fixed 7-byte header then the value. Integers are little-endian.
//
//   request: 'T' 'S' | command u8 | key_bytes u16 | value_bytes u32 | timeout_ms u32 | key | value
//   reply:   'T' 'S' | status  u8 | value_bytes u32 | value
//
// Limits are checked from the header before anything else is read: a key longer than
// kMaxKeyBytes or a value longer than kMaxValueBytes, a bad magic or an unknown command make the
// server close the connection. The body is then read as it arrives (store/frame_parser.h), so a
// header never makes the server allocate what it announces.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace twinccl::store {

inline constexpr std::size_t kMaxKeyBytes = 1024;
inline constexpr std::size_t kMaxValueBytes = std::size_t{1} << 20;  // 1 MiB
inline constexpr std::size_t kRequestHeaderBytes = 13;
inline constexpr std::size_t kReplyHeaderBytes = 7;
inline constexpr std::uint8_t kMagic0 = 'T';
inline constexpr std::uint8_t kMagic1 = 'S';

enum class Command : std::uint8_t {
  set = 1,   // store value under key, wake waiters
  get = 2,   // reply with the value once key exists (or timeout)
  add = 3,   // value is an 8-byte signed delta; reply with the new 8-byte counter
  wait = 4,  // like get, without the value in the reply
};

enum class Status : std::uint8_t {
  ok = 0,
  timeout = 1,      // the key did not appear within the request's timeout
  bad_request = 2,  // the value carries a message (e.g. add on a non-counter value)
  store_full = 3,   // the value carries a message: the set would pass the server's byte cap
};

struct RequestHeader {
  Command command = Command::get;
  std::uint16_t key_bytes = 0;
  std::uint32_t value_bytes = 0;
  std::uint32_t timeout_ms = 0;
};

struct ReplyHeader {
  Status status = Status::ok;
  std::uint32_t value_bytes = 0;
};

std::array<std::uint8_t, kRequestHeaderBytes> encode(const RequestHeader& header);
std::array<std::uint8_t, kReplyHeaderBytes> encode(const ReplyHeader& header);

// Decoding checks magic, the command/status enum and the size limits; nullopt with `why` filled
// when the header must be rejected.
std::optional<RequestHeader> decode_request(const std::uint8_t* bytes, std::string* why);
std::optional<ReplyHeader> decode_reply(const std::uint8_t* bytes, std::string* why);

// Counters travel as 8 little-endian bytes in add requests/replies.
std::string encode_i64(std::int64_t value);
std::int64_t decode_i64(std::string_view bytes);  // bytes.size() must be 8

// Counters are stored as decimal text so that get() of a counter is readable.
std::optional<std::int64_t> parse_counter(std::string_view text);

std::string_view name(Command command);

}  // namespace twinccl::store
