// capped / capped_keeping_end (capped_text.h): "..." marks the cut; a cut keeps whole characters.
#include "capped_text.h"

#include <algorithm>

#include "twinccl/utf8_text.h"

namespace twinccl::topo::detail {
namespace {

constexpr std::string_view kCutMark = "...";

// The longest suffix of `text` of at most `max_bytes` that starts on a character boundary (valid
// UTF-8: a boundary is any byte that is not 10xxxxxx).
std::string_view utf8_tail(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t start = text.size() - max_bytes;
  while (start < text.size() && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) ++start;
  return text.substr(start);
}

}  // namespace

std::string capped(std::string_view text, std::size_t max_bytes) {
  return capped_keeping_end(text, max_bytes, 0);
}

std::string capped_keeping_end(std::string_view text, std::size_t max_bytes,
                               std::size_t end_bytes) {
  const std::string valid = valid_utf8(text);
  if (valid.size() <= max_bytes) return valid;
  const std::size_t room = max_bytes > kCutMark.size() ? max_bytes - kCutMark.size() : 0;
  const std::string_view end = utf8_tail(valid, std::min(end_bytes, room));
  return cut_utf8(valid, room - end.size()) + std::string(kCutMark) + std::string(end);
}

}  // namespace twinccl::topo::detail
