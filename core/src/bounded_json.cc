// The bounded JSON reader's input and messages (twinccl/bounded_json.h).
#include "twinccl/bounded_json.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "twinccl/call_site_text.h"

namespace twinccl::json_detail {
namespace {

constexpr std::size_t kQuotedBytes = 100;                          // of the input a message quotes
constexpr std::streamsize kBlockBytes = std::streamsize{1} << 16;  // read from a stream at a time
constexpr std::ptrdiff_t kKept = 2;  // characters kept from the previous block: the last one read,
                                     // and the one before it (where a number ends)

std::string at_text(Position at) {
  return "at line " + std::to_string(at.line) + ", column " + std::to_string(at.column);
}

}  // namespace

JsonChars::JsonChars(std::string_view text) {
  char* begin = const_cast<char*>(text.data());  // only read: no put area, no putback
  setg(begin, begin, begin + text.size());
  seen_ = begin;
}

JsonChars::JsonChars(std::istream& in) : source_(in.rdbuf()), block_(kKept + kBlockBytes) {
  setg(block_.data(), block_.data(), block_.data());
  seen_ = block_.data();
}

JsonChars::int_type JsonChars::underflow() {
  if (source_ == nullptr) return traits_type::eof();
  // The last characters read stay: a message may ask where they are.
  const char* leaving = egptr() - std::min<std::ptrdiff_t>(kKept, egptr() - eback());
  while (const void* found = std::memchr(seen_, '\n', static_cast<std::size_t>(leaving - seen_))) {
    seen_ = static_cast<const char*>(found) + 1;
    ++lines_;
    line_start_ = offset_of(seen_);
  }
  const std::size_t kept = static_cast<std::size_t>(egptr() - leaving);
  std::memmove(block_.data(), leaving, kept);
  block_offset_ += static_cast<std::size_t>(leaving - eback());
  const std::streamsize n = source_->sgetn(block_.data() + kept, kBlockBytes);
  seen_ = block_.data();
  setg(block_.data(), block_.data() + kept, block_.data() + kept + std::max<std::streamsize>(n, 0));
  return n > 0 ? traits_type::to_int_type(*gptr()) : traits_type::eof();
}

std::size_t JsonChars::offset_of(const char* c) const {
  return block_offset_ + static_cast<std::size_t>(c - eback());
}

Position JsonChars::value_end(bool number) const {
  if (gptr() == eback()) return {};  // nothing read yet
  const char* last = gptr() - 1;
  if (number && last > eback() &&
      std::string_view("0123456789+-.eE").find(*last) == std::string_view::npos) {
    --last;  // the character that ended the number
  }
  std::size_t lines = lines_, line_start = line_start_;
  for (const char* c = seen_; c <= last; ++c) {
    if (*c == '\n') {
      ++lines;
      line_start = offset_of(c) + 1;
    }
  }
  return {lines + 1, offset_of(last) + 1 - line_start};
}

std::string library_text(std::string what) {
  if (what.rfind("[json.exception.", 0) == 0 && what.find("] ") != std::string::npos)
    what.erase(0, what.find("] ") + 2);
  return what;
}

std::string problem_at(const std::string& what, Position at) { return what + " " + at_text(at); }

std::string not_valid_json(std::string text, const std::string& last_token, Position at) {
  text = library_text(std::move(text));  // "parse error at line 1, column 2: syntax error ..."
  // The input nlohmann quotes in full ("last read: '<token>'", "number overflow parsing
  // '<token>'").
  const std::string token = "'" + last_token + "'";
  if (const std::size_t i = text.find(token); !last_token.empty() && i != std::string::npos)
    text.replace(i, token.size(), quoted_text(last_token, kQuotedBytes, true, '"'));
  constexpr std::string_view kParseError = "parse error at ";  // nlohmann's own position
  if (text.rfind(kParseError, 0) == 0)
    return "not valid JSON at " + text.substr(kParseError.size());
  return "not valid JSON " + at_text(at) + ": " + text;
}

void throw_refusal(const JsonRefuse& refuse, const std::string& why) {
  refuse(why);
  throw std::logic_error("bounded JSON reader: refuse() returned: " + why);  // it must throw
}

}  // namespace twinccl::json_detail
