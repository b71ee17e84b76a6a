// valid UTF-8 text (twinccl/utf8_text.h). How it works: a decoder walks the bytes; a lead byte
// says how many continuation bytes (10xxxxxx) follow, and the decoded code point must need that
// many (no overlong form), not be a surrogate (U+D800..U+DFFF) and be at most U+10FFFF. A byte that
// does not start such a character is one foreign byte.
#include "twinccl/utf8_text.h"

namespace twinccl {
namespace {

// The length of the valid character starting at text[i], or 0 when text[i] starts none.
std::size_t char_length(std::string_view text, std::size_t i) {
  const auto b0 = static_cast<unsigned char>(text[i]);
  if (b0 < 0x80) return 1;
  std::size_t n = 0;
  char32_t cp = 0, min = 0;
  if ((b0 & 0xE0) == 0xC0) {
    n = 2, cp = b0 & 0x1F, min = 0x80;
  } else if ((b0 & 0xF0) == 0xE0) {
    n = 3, cp = b0 & 0x0F, min = 0x800;
  } else if ((b0 & 0xF8) == 0xF0) {
    n = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const auto b = static_cast<unsigned char>(text[i + k]);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

}  // namespace

bool is_valid_utf8(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = char_length(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string valid_utf8(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t n = char_length(text, i);
    if (n == 0) {
      const auto c = static_cast<unsigned char>(text[i]);
      out += {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
      ++i;
    } else {
      out.append(text.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string cut_utf8(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  // A character starting up to 3 bytes before the cut and crossing it is left out whole.
  for (std::size_t k = 1; k <= 3 && k <= max_bytes; ++k) {
    const std::size_t start = max_bytes - k;
    const std::size_t n = char_length(text, start);
    if (n > k) return std::string(text.substr(0, start));
    if (n != 0) break;
  }
  return std::string(text.substr(0, max_bytes));
}

}  // namespace twinccl
