// call_site_text.h: the one way messages name a call and echo a user's text.
#include "twinccl/call_site_text.h"

#include <algorithm>
#include <cstdio>

namespace twinccl {

std::string call_site_text(std::string_view operation, std::string_view comm, int rank) {
  std::string text;
  text.reserve(operation.size() + comm.size() + 24);
  text.append(operation)
      .append(" on comm '")
      .append(comm)
      .append("' rank ")
      .append(std::to_string(rank));
  return text;
}

std::string call_site_text(std::string_view operation, std::string_view comm, int rank,
                           const std::source_location& where) {
  return call_site_text(operation, comm, rank) + " (" + describe_call_site(where) + ")";
}

std::string describe_call_site(const std::source_location& where) {
  std::string_view file = where.file_name();
  auto slash = file.find_last_of('/');
  if (slash != std::string_view::npos) file = file.substr(slash + 1);
  return std::string(file) + ":" + std::to_string(where.line());
}

std::string address_text(std::uintptr_t address) {
  char text[2 + 2 * sizeof(address) + 1];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(address));
  return text;
}

namespace {

void append_hex(std::string& out, unsigned char byte) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += {'\\', 'x', kHex[byte >> 4], kHex[byte & 15]};
}

}  // namespace

std::string quoted_text(std::string_view text, std::size_t max_bytes, bool with_length,
                        char quote) {
  std::size_t shown = std::min(text.size(), max_bytes);
  while (shown > 0 && shown < text.size() &&
         (static_cast<unsigned char>(text[shown]) & 0xc0) == 0x80) {
    --shown;  // never half a UTF-8 character
  }
  std::string out(1, quote);
  for (char c : text.substr(0, shown)) {
    auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      append_hex(out, byte);
    } else {
      if (c == quote || c == '\\') out += '\\';
      out += c;
    }
  }
  if (shown == text.size()) return out + quote;
  out += "...";
  out += quote;
  return with_length ? out + " (" + std::to_string(text.size()) + " bytes)" : out;
}

std::string shown_value(std::string_view text, std::size_t max_chars) {
  std::string out;
  for (char c : text) {
    if (out.size() >= max_chars) return out + "...";
    auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f) {
      out += c;
    } else {
      append_hex(out, byte);
    }
  }
  return out;
}

}  // namespace twinccl
