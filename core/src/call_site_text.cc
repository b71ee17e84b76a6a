// call_site_text.h: the one way messages name a call.
#include "twinccl/call_site_text.h"

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

}  // namespace twinccl
