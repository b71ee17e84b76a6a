// call_site_text.h: the one way messages name a call.
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

std::string quoted_text(std::string_view text, std::size_t max_bytes, bool with_length) {
  std::string out = "'";
  std::string_view shown = text.substr(0, std::min(text.size(), max_bytes));
  for (char c : shown) {
    auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte == 0x7f) {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      out += escaped;
    } else {
      out += c;
    }
  }
  if (shown.size() < text.size() && !with_length) return out + "...'";
  if (shown.size() < text.size()) return out + "...' (" + std::to_string(text.size()) + " bytes)";
  return out + "'";
}

}  // namespace twinccl
