// The one reader of untrusted JSON (topology files, traces, nccl-tests -J logs, PyTorch traces):
// caps checked while parsing, each problem one bounded line saying where.
//
//   const nlohmann::json doc = parse_bounded_json(text, {.max_depth = 16, .max_values = 1 << 22},
//       [&](const std::string& why) { throw ConfigError(source + ": " + why); });
//   // why: "nesting deeper than 16 levels at line 3, column 9"
//
// How it works. nlohmann's SAX parser (linear, not recursive) reads through JsonChars (a text in
// place, or a stream in blocks); BoundedSax counts each value, then hands it to nlohmann's DOM
// builder or a streaming handler, so nothing is built past a cap. (nlohmann's parse with a
// callback is quadratic: after every object it scans the enclosing array.) Internal to the
// readers; the header needs nlohmann_json, which they link.
#pragma once

#include <cstddef>
#include <functional>
#include <istream>
#include <limits>
#include <nlohmann/json.hpp>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

namespace twinccl {

struct JsonCaps {
  static constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  int max_depth = 64;              // arrays and objects inside one another
  std::size_t max_values = kNone;  // arrays and objects count
  std::size_t max_object_members = kNone;
  std::size_t max_bytes = kNone;
  std::string_view over_bytes_advice = "";  // after "more than N bytes of JSON (the cap per file)"
};

using JsonRefuse = std::function<void(const std::string& why)>;  // must throw (a ConfigError)

namespace json_detail {

[[noreturn]] void throw_refusal(const JsonRefuse& refuse, const std::string& why);
// nlohmann's message without its "[json.exception.type_error.302] " prefix.
std::string library_text(std::string what);
// "not valid JSON at line L, column C: <library_text>", the input it quotes cut as quoted_text.
std::string not_valid_json(std::string what, const std::string& last_token, const std::string& at);

// What the parser reads: a text in place, or a stream copied in blocks of 64 KiB (the last two
// characters kept, for messages; the newlines of what is left behind counted with memchr).
class JsonChars final : public std::streambuf {
 public:
  JsonChars(std::string_view text, const JsonCaps& caps, const JsonRefuse& refuse);
  JsonChars(std::istream& in, const JsonCaps& caps, const JsonRefuse& refuse);
  // "at line L, column C" of the last character read or, with `number`, of the number just read
  // (nlohmann knows a number has ended when it has read the character after it).
  std::string where(bool number = false) const;

 protected:
  int_type underflow() override;

 private:
  std::size_t offset_of(const char* c) const { return block_offset_ + (c - eback()); }

  const JsonCaps& caps_;
  const JsonRefuse& refuse_;
  std::streambuf* source_ = nullptr;
  std::vector<char> block_;
  const char* seen_ = nullptr;    // newlines before it are counted in lines_ and line_start_
  std::size_t block_offset_ = 0;  // of eback() in the stream
  std::size_t lines_ = 0, line_start_ = 0;
};

// Checks every value against the caps, then hands it to `inner` (the same SAX interface).
template <class Json, class Inner>
class BoundedSax {
 public:
  using number_integer_t = typename Json::number_integer_t;
  using number_unsigned_t = typename Json::number_unsigned_t;
  using number_float_t = typename Json::number_float_t;
  using string_t = typename Json::string_t;
  using binary_t = typename Json::binary_t;

  BoundedSax(Inner& inner, const JsonCaps& caps, const JsonRefuse& refuse, const JsonChars& chars)
      : inner_(inner), caps_(caps), refuse_(refuse), chars_(chars) {}

  bool null() { return counted(false) && inner_.null(); }
  bool boolean(bool b) { return counted(false) && inner_.boolean(b); }
  bool number_integer(number_integer_t i) { return counted(true) && inner_.number_integer(i); }
  bool number_unsigned(number_unsigned_t u) { return counted(true) && inner_.number_unsigned(u); }
  bool number_float(number_float_t d, const string_t& s) {
    return counted(true) && inner_.number_float(d, s);
  }
  bool string(string_t& s) { return counted(false) && inner_.string(s); }
  bool binary(binary_t& b) { return counted(false) && inner_.binary(b); }
  bool start_object(std::size_t n) {
    opened();
    if (members_.size() <= static_cast<std::size_t>(depth_)) members_.resize(depth_ + 1);
    members_[depth_] = 0;
    return inner_.start_object(n);
  }
  bool key(string_t& k) {
    if (++members_[depth_] > caps_.max_object_members)
      fail("an object with more than " + std::to_string(caps_.max_object_members) + " fields");
    return inner_.key(k);
  }
  bool end_object() { return --depth_, inner_.end_object(); }
  bool start_array(std::size_t n) { return opened() && inner_.start_array(n); }
  bool end_array() { return --depth_, inner_.end_array(); }
  bool parse_error(std::size_t, const std::string& last_token,
                   const nlohmann::detail::exception& e) {
    // nlohmann's text says where, but for a number too large ("1e309"): where the number ends
    throw_refusal(refuse_, not_valid_json(e.what(), last_token, chars_.where(true)));
  }

 private:
  [[noreturn]] void fail(const std::string& what, bool number = false) const {
    throw_refusal(refuse_, what + " " + chars_.where(number));
  }
  bool counted(bool number) {
    if (++values_ > caps_.max_values)
      fail("more than " + std::to_string(caps_.max_values) + " JSON values", number);
    return true;
  }
  bool opened() {
    counted(false);
    if (depth_++ >= caps_.max_depth)
      fail("nesting deeper than " + std::to_string(caps_.max_depth) + " levels");
    return true;
  }

  Inner& inner_;
  const JsonCaps& caps_;
  const JsonRefuse& refuse_;
  const JsonChars& chars_;
  std::vector<std::size_t> members_;  // [d]: fields so far of the object open at depth d
  std::size_t values_ = 0;
  int depth_ = 0;
};

}  // namespace json_detail

// Parses a text (std::string_view) or a stream (std::istream&) into `inner`, a SAX handler for
// Json (nlohmann's json_sax interface, virtual or not), refusing at the first cap passed.
template <class Json = nlohmann::json, class Input, class Inner>
void sax_parse_bounded(Input&& input, const JsonCaps& caps, const JsonRefuse& refuse,
                       Inner& inner) {
  json_detail::JsonChars chars(input, caps, refuse);
  json_detail::BoundedSax<Json, Inner> bounded(inner, caps, refuse, chars);
  std::istream in(&chars);
  try {
    Json::sax_parse(in, &bounded);
  } catch (const nlohmann::json::exception& e) {  // thrown by `inner`: still one bounded line
    json_detail::throw_refusal(refuse, json_detail::not_valid_json(e.what(), "", chars.where()));
  }
}

// The document (nlohmann::json, or nlohmann::ordered_json to keep the fields' order) of a text
// or a stream.
template <class Json = nlohmann::json, class Input>
Json parse_bounded_json(Input&& input, const JsonCaps& caps, const JsonRefuse& refuse) {
  Json doc;
  nlohmann::detail::json_sax_dom_parser<Json> build(doc);  // what Json::parse builds with
  sax_parse_bounded<Json>(input, caps, refuse, build);
  return doc;
}

}  // namespace twinccl
