// The bounded JSON reader's input and messages (twinccl/bounded_json.h).
#include "twinccl/bounded_json.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "twinccl/call_site_text.h"

namespace twinccl::json_detail {
namespace {

constexpr std::streamsize kBlockBytes = std::streamsize{1} << 16;  // read from a stream at once
constexpr std::ptrdiff_t kKept = 2;  // the last character read and the one before it

std::string too_big(const JsonCaps& caps) {
  return "more than " + std::to_string(caps.max_bytes) + " bytes of JSON (the cap per file)" +
         std::string(caps.over_bytes_advice);
}

}  // namespace

JsonChars::JsonChars(std::string_view text, const JsonCaps& caps, const JsonRefuse& refuse)
    : caps_(caps), refuse_(refuse) {
  if (text.size() > caps.max_bytes) throw_refusal(refuse, too_big(caps));
  char* begin = const_cast<char*>(text.data());  // only read: no put area, no putback
  setg(begin, begin, begin + text.size());
  seen_ = begin;
}

JsonChars::JsonChars(std::istream& in, const JsonCaps& caps, const JsonRefuse& refuse)
    : caps_(caps), refuse_(refuse), source_(in.rdbuf()), block_(kKept + kBlockBytes) {
  setg(block_.data(), block_.data(), block_.data());
  seen_ = block_.data();
}

JsonChars::int_type JsonChars::underflow() {
  if (source_ == nullptr) return traits_type::eof();
  const char* leaving = egptr() - std::min<std::ptrdiff_t>(kKept, egptr() - eback());
  while (const void* found = std::memchr(seen_, '\n', static_cast<std::size_t>(leaving - seen_))) {
    seen_ = static_cast<const char*>(found) + 1;
    ++lines_;
    line_start_ = offset_of(seen_);
  }
  const std::size_t kept = static_cast<std::size_t>(egptr() - leaving);
  std::memmove(block_.data(), leaving, kept);
  block_offset_ += static_cast<std::size_t>(leaving - eback());
  const std::streamsize n =
      std::max<std::streamsize>(source_->sgetn(block_.data() + kept, kBlockBytes), 0);
  seen_ = block_.data();
  setg(block_.data(), block_.data() + kept, block_.data() + kept + n);
  if (offset_of(egptr()) > caps_.max_bytes) throw_refusal(refuse_, too_big(caps_));
  return n > 0 ? traits_type::to_int_type(*gptr()) : traits_type::eof();
}

std::string JsonChars::where(bool number) const {
  if (gptr() == eback()) return "at line 1, column 0";  // nothing read yet
  const char* last = gptr() - 1;
  if (number && last > eback() && !std::strchr("0123456789+-.eE", *last)) --last;
  std::size_t lines = lines_, line_start = line_start_;
  for (const char* c = seen_; c <= last; ++c) {
    if (*c == '\n') {
      ++lines;
      line_start = offset_of(c) + 1;
    }
  }
  return "at line " + std::to_string(lines + 1) + ", column " +
         std::to_string(offset_of(last) + 1 - line_start);
}

std::string library_text(std::string what) {
  if (what.rfind("[json.exception.", 0) == 0 && what.find("] ") != std::string::npos)
    what.erase(0, what.find("] ") + 2);
  return what;
}

std::string not_valid_json(std::string what, const std::string& last_token, const std::string& at) {
  what = library_text(std::move(what));  // "parse error at line 1, column 2: syntax error ..."
  // The input nlohmann quotes in full ("last read: '<token>'", "number overflow parsing
  // '<token>'").
  const std::string token = "'" + last_token + "'";
  if (const std::size_t i = what.find(token); !last_token.empty() && i != std::string::npos)
    what.replace(i, token.size(), quoted_text(last_token, 100, true, '"'));
  constexpr std::string_view kParseError = "parse error at ";  // nlohmann's own position
  if (what.rfind(kParseError, 0) == 0)
    return "not valid JSON at " + what.substr(kParseError.size());
  return "not valid JSON " + at + ": " + what;
}

void throw_refusal(const JsonRefuse& refuse, const std::string& why) {
  refuse(why);
  throw std::logic_error("bounded JSON reader: refuse() returned: " + why);  // it must throw
}

}  // namespace twinccl::json_detail
