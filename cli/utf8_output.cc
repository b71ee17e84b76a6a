// The UTF-8 filter of standard output (utf8_output.h). How it works: bytes collect in a buffer;
// on a flush or past 4 KiB the buffer goes out through valid_utf8, except a possibly unfinished
// character at its end (a lead byte followed by fewer continuation bytes than it announces),
// which waits for the next write. finish() sends that too.
#include "utf8_output.h"

#include "twinccl/utf8_text.h"

namespace twinccl::cli {
namespace {

constexpr std::size_t kHoldBytes = 4096;

// How many bytes at the end of `text` may be the start of a character still being written.
std::size_t unfinished_tail(const std::string& text) {
  for (std::size_t back = 1; back <= 3 && back <= text.size(); ++back) {
    const auto c = static_cast<unsigned char>(text[text.size() - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: look further back
    const std::size_t need = (c & 0xE0) == 0xC0   ? 2
                             : (c & 0xF0) == 0xE0 ? 3
                             : (c & 0xF8) == 0xF0 ? 4
                                                  : 1;
    return need > back ? back : 0;
  }
  return 0;
}

}  // namespace

bool Utf8Filter::emit(bool final) {
  const std::size_t keep = final ? 0 : unfinished_tail(pending_);
  const std::string out = valid_utf8(std::string_view(pending_).substr(0, pending_.size() - keep));
  pending_.erase(0, pending_.size() - keep);
  return target_->sputn(out.data(), static_cast<std::streamsize>(out.size())) ==
         static_cast<std::streamsize>(out.size());
}

bool Utf8Filter::finish() { return emit(true) && target_->pubsync() == 0; }

Utf8Filter::int_type Utf8Filter::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  pending_ += traits_type::to_char_type(c);
  if (pending_.size() >= kHoldBytes && !emit(false)) return traits_type::eof();
  return c;
}

std::streamsize Utf8Filter::xsputn(const char* s, std::streamsize n) {
  pending_.append(s, static_cast<std::size_t>(n));
  if (pending_.size() >= kHoldBytes && !emit(false)) return 0;
  return n;
}

int Utf8Filter::sync() { return emit(false) && target_->pubsync() == 0 ? 0 : -1; }

}  // namespace twinccl::cli
