// The one reader of untrusted JSON (topology files, traces, nccl-tests -J logs, PyTorch profiler
// traces): caps checked while parsing, every problem one bounded line saying where it is.
//
//   const nlohmann::json doc = parse_bounded_json(text, {.max_depth = 16, .max_values = 1 << 22},
//       [&](const std::string& why) { throw ConfigError(source + ": " + why); });
//   // why: "nesting deeper than 16 levels at line 3, column 9"
//
// How it works. nlohmann's SAX parser (linear, and iterative: nesting does not recurse) reads the
// text through JsonChars, which finds lines and columns when a message asks. BoundedSax checks
// every value against the caps, then hands it to the inner handler: nlohmann's own DOM builder
// (parse_bounded_json) or a streaming filter (the PyTorch importer's). So nothing is built past a
// cap: a deep file is refused at its first level too deep, a huge one at its first value too many,
// an object with too many fields (an ordered_json finds its keys by linear search) at its first
// field too many. (nlohmann's parse with a callback filters too, but is quadratic: after every
// object it scans the enclosing array; a trace of 100k ops took 39 s.) The messages, at most a few
// hundred bytes:
//   "nesting deeper than 16 levels at line 3, column 9"
//   "more than 4000000 JSON values at line 9, column 2"
//   "an object with more than 256 fields at line 1, column 2049"
//   "not valid JSON at line 1, column 2: syntax error while parsing value - ...; last read: '{x'"
// (the input a message quotes is cut as quoted_text cuts it). Internal to TwinCCL's readers; the
// header needs nlohmann_json, which they link (core's library itself does not).
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
  int max_depth = 64;  // arrays and objects inside one another
  std::size_t max_values = std::numeric_limits<std::size_t>::max();  // arrays and objects count
  std::size_t max_object_members = std::numeric_limits<std::size_t>::max();  // fields of one
};

// Called with the message; must throw (a ConfigError naming the file).
using JsonRefuse = std::function<void(const std::string& why)>;

namespace json_detail {

struct Position {
  std::size_t line = 1, column = 0;  // of the last character read (1-based), as nlohmann counts
};

// The characters the parser reads (through nlohmann's stream input, as fast as it reads a text),
// from a text in place or from a stream in blocks of 64 KiB, and where the parser is. Reading a
// character costs nothing more: lines and columns are counted only when a message asks (and the
// newlines of each block a stream leaves behind, with memchr).
class JsonChars final : public std::streambuf {
 public:
  explicit JsonChars(std::string_view text);
  explicit JsonChars(std::istream& in);

  // Of the last character read; with `number`, of the last character of the number just read
  // (nlohmann knows a number has ended when it has read the character after it).
  Position value_end(bool number = false) const;

 protected:
  int_type underflow() override;

 private:
  std::size_t offset_of(const char* c) const;

  std::streambuf* source_ = nullptr;
  std::vector<char> block_;       // the last 2 characters of the previous block, then the next
  const char* seen_ = nullptr;    // newlines before it are counted in lines_ and line_start_
  std::size_t block_offset_ = 0;  // of eback() in the stream
  std::size_t lines_ = 0;         // '\n' before seen_
  std::size_t line_start_ = 0;    // offset of the first character after the last of them
};

// nlohmann's message without its "[json.exception.type_error.302] " prefix.
std::string library_text(std::string what);
// "<what> at line L, column C".
std::string problem_at(const std::string& what, Position at);
// A library error as one bounded line: "not valid JSON at line L, column C: <library_text>", the
// input it quotes (`last_token`) cut.
std::string not_valid_json(std::string library_text, const std::string& last_token, Position at);
[[noreturn]] void throw_refusal(const JsonRefuse& refuse, const std::string& why);

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
    open();
    if (members_.size() <= static_cast<std::size_t>(depth_)) members_.resize(depth_ + 1);
    members_[depth_] = 0;
    return inner_.start_object(n);
  }
  bool key(string_t& k) {
    if (++members_[depth_] > caps_.max_object_members)
      fail("an object with more than " + std::to_string(caps_.max_object_members) + " fields",
           chars_.value_end());
    return inner_.key(k);
  }
  bool end_object() {
    --depth_;
    return inner_.end_object();
  }
  bool start_array(std::size_t n) {
    open();
    return inner_.start_array(n);
  }
  bool end_array() {
    --depth_;
    return inner_.end_array();
  }
  bool parse_error(std::size_t, const std::string& last_token,
                   const nlohmann::detail::exception& e) {
    // nlohmann's text has its position, but for a number too large ("1e309"): the number's end
    throw_refusal(refuse_, not_valid_json(e.what(), last_token, chars_.value_end(true)));
  }

 private:
  [[noreturn]] void fail(const std::string& what, Position at) const {
    throw_refusal(refuse_, problem_at(what, at));
  }
  bool counted(bool number) {
    if (++values_ > caps_.max_values)
      fail("more than " + std::to_string(caps_.max_values) + " JSON values",
           chars_.value_end(number));
    return true;
  }
  void open() {
    counted(false);
    if (depth_ >= caps_.max_depth)
      fail("nesting deeper than " + std::to_string(caps_.max_depth) + " levels",
           chars_.value_end());
    ++depth_;
  }

  Inner& inner_;
  const JsonCaps& caps_;
  const JsonRefuse& refuse_;
  const JsonChars& chars_;
  std::vector<std::size_t> members_;  // [d]: fields so far of the object open at depth d
  std::size_t values_ = 0;
  int depth_ = 0;
};

template <class Json, class Inner>
void sax_parse(JsonChars& chars, const JsonCaps& caps, const JsonRefuse& refuse, Inner& inner) {
  BoundedSax<Json, Inner> bounded(inner, caps, refuse, chars);
  std::istream in(&chars);
  try {
    Json::sax_parse(in, &bounded);
  } catch (const nlohmann::json::exception& e) {  // thrown by `inner`: still one bounded line
    throw_refusal(refuse, not_valid_json(e.what(), "", chars.value_end()));
  }
}

}  // namespace json_detail

// Parses `text` into `inner`, a SAX handler for Json (nlohmann's json_sax interface, virtual or
// not), refusing through `refuse` at the first cap passed or syntax error.
template <class Json = nlohmann::json, class Inner>
void sax_parse_bounded(std::string_view text, const JsonCaps& caps, const JsonRefuse& refuse,
                       Inner& inner) {
  json_detail::JsonChars chars(text);
  json_detail::sax_parse<Json>(chars, caps, refuse, inner);
}

// The same from a stream, read in blocks of 64 KiB (its size is the caller's to cap).
template <class Json = nlohmann::json, class Inner>
void sax_parse_bounded(std::istream& in, const JsonCaps& caps, const JsonRefuse& refuse,
                       Inner& inner) {
  json_detail::JsonChars chars(in);
  json_detail::sax_parse<Json>(chars, caps, refuse, inner);
}

// The document (nlohmann::json, or nlohmann::ordered_json to keep the fields' order).
template <class Json = nlohmann::json>
Json parse_bounded_json(std::string_view text, const JsonCaps& caps, const JsonRefuse& refuse) {
  Json doc;
  nlohmann::detail::json_sax_dom_parser<Json> build(doc);  // what Json::parse builds with
  sax_parse_bounded<Json>(text, caps, refuse, build);
  return doc;
}

}  // namespace twinccl
