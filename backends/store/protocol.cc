// Encoding and checking of the store's frame headers (see protocol.h).
#include "store/protocol.h"

#include <charconv>

namespace twinccl::store {
namespace {

void put_u16(std::uint8_t* out, std::uint16_t v) {
  out[0] = static_cast<std::uint8_t>(v & 0xFFu);
  out[1] = static_cast<std::uint8_t>(v >> 8);
}

void put_u32(std::uint8_t* out, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) out[i] = static_cast<std::uint8_t>((v >> (8 * i)) & 0xFFu);
}

std::uint16_t get_u16(const std::uint8_t* in) {
  return static_cast<std::uint16_t>(in[0] | (in[1] << 8));
}

std::uint32_t get_u32(const std::uint8_t* in) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<std::uint32_t>(in[i]) << (8 * i);
  return v;
}

bool magic_ok(const std::uint8_t* bytes, std::string* why) {
  if (bytes[0] == kMagic0 && bytes[1] == kMagic1) return true;
  *why = "bad magic bytes (not a TwinCCL store frame)";
  return false;
}

}  // namespace

std::array<std::uint8_t, kRequestHeaderBytes> encode(const RequestHeader& header) {
  std::array<std::uint8_t, kRequestHeaderBytes> out{};
  out[0] = kMagic0;
  out[1] = kMagic1;
  out[2] = static_cast<std::uint8_t>(header.command);
  put_u16(&out[3], header.key_bytes);
  put_u32(&out[5], header.value_bytes);
  put_u32(&out[9], header.timeout_ms);
  return out;
}

std::array<std::uint8_t, kReplyHeaderBytes> encode(const ReplyHeader& header) {
  std::array<std::uint8_t, kReplyHeaderBytes> out{};
  out[0] = kMagic0;
  out[1] = kMagic1;
  out[2] = static_cast<std::uint8_t>(header.status);
  put_u32(&out[3], header.value_bytes);
  return out;
}

std::optional<RequestHeader> decode_request(const std::uint8_t* bytes, std::string* why) {
  if (!magic_ok(bytes, why)) return std::nullopt;
  RequestHeader h;
  const std::uint8_t command = bytes[2];
  if (command < static_cast<std::uint8_t>(Command::set) ||
      command > static_cast<std::uint8_t>(Command::wait)) {
    *why = "unknown command " + std::to_string(command);
    return std::nullopt;
  }
  h.command = static_cast<Command>(command);
  h.key_bytes = get_u16(&bytes[3]);
  h.value_bytes = get_u32(&bytes[5]);
  h.timeout_ms = get_u32(&bytes[9]);
  if (h.key_bytes == 0 || h.key_bytes > kMaxKeyBytes) {
    *why = "key of " + std::to_string(h.key_bytes) + " bytes (allowed 1.." +
           std::to_string(kMaxKeyBytes) + ")";
    return std::nullopt;
  }
  if (h.value_bytes > kMaxValueBytes) {
    *why = "value of " + std::to_string(h.value_bytes) + " bytes (limit " +
           std::to_string(kMaxValueBytes) + ")";
    return std::nullopt;
  }
  if (h.command == Command::add && h.value_bytes != 8) {
    *why = "add with a " + std::to_string(h.value_bytes) + "-byte delta (expected 8)";
    return std::nullopt;
  }
  return h;
}

std::optional<ReplyHeader> decode_reply(const std::uint8_t* bytes, std::string* why) {
  if (!magic_ok(bytes, why)) return std::nullopt;
  ReplyHeader h;
  const std::uint8_t status = bytes[2];
  if (status > static_cast<std::uint8_t>(Status::store_full)) {
    *why = "unknown reply status " + std::to_string(status);
    return std::nullopt;
  }
  h.status = static_cast<Status>(status);
  h.value_bytes = get_u32(&bytes[3]);
  if (h.value_bytes > kMaxValueBytes) {
    *why = "reply value of " + std::to_string(h.value_bytes) + " bytes (limit " +
           std::to_string(kMaxValueBytes) + ")";
    return std::nullopt;
  }
  return h;
}

std::string encode_i64(std::int64_t value) {
  const auto u = static_cast<std::uint64_t>(value);
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i)
    out[static_cast<std::size_t>(i)] = static_cast<char>((u >> (8 * i)) & 0xFFu);
  return out;
}

std::int64_t decode_i64(std::string_view bytes) {
  std::uint64_t u = 0;
  for (std::size_t i = 0; i < 8 && i < bytes.size(); ++i) {
    u |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(bytes[i])) << (8 * i);
  }
  return static_cast<std::int64_t>(u);
}

std::optional<std::int64_t> parse_counter(std::string_view text) {
  std::int64_t v = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return v;
}

std::string_view name(Command command) {
  switch (command) {
    case Command::set:
      return "set";
    case Command::get:
      return "get";
    case Command::add:
      return "add";
    case Command::wait:
      return "wait";
  }
  return "invalid";
}

}  // namespace twinccl::store
