// Internal: parse JSON text with limits checked while parsing (nesting depth, number of values),
// so a hostile file is refused before a huge or deep document is built. Every problem goes to
// `refuse(why)`, which must throw (a ConfigError naming the file); `why` is one bounded line:
//   "nesting deeper than 16 levels", "more than 4000000 JSON values",
//   "not valid JSON: parse error at line 1, column 2: ..." (nlohmann's prefix removed).
// Used by the trace reader (trace/src/trace_file.cc) and sim's nccl-tests -J reader; internal.
#pragma once

#include <cstddef>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace twinccl::trace::detail {

[[noreturn]] inline void refuse_or_abort(const std::function<void(const std::string&)>& refuse,
                                         const std::string& why) {
  refuse(why);
  throw std::logic_error("bounded_json: refuse() returned");  // refuse must throw
}

// A first pass over the text that builds nothing: counts nesting and values, and stops at the
// first cap or syntax error. (nlohmann's parse with a callback is quadratic: after every object it
// scans the whole enclosing array for discarded values; a trace of 100k ops took 39 s.)
class BoundedJsonCheck : public nlohmann::json_sax<nlohmann::json> {
 public:
  using json = nlohmann::json;
  BoundedJsonCheck(int max_depth, std::size_t max_values,
                   const std::function<void(const std::string&)>& refuse)
      : max_depth_(max_depth), max_values_(max_values), refuse_(refuse) {}
  bool null() override { return value(); }
  bool boolean(bool) override { return value(); }
  bool number_integer(json::number_integer_t) override { return value(); }
  bool number_unsigned(json::number_unsigned_t) override { return value(); }
  bool number_float(json::number_float_t, const json::string_t&) override { return value(); }
  bool string(json::string_t&) override { return value(); }
  bool binary(json::binary_t&) override { return value(); }
  bool start_object(std::size_t) override { return open(); }
  bool key(json::string_t&) override { return true; }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    throw e;  // a parse_error or out_of_range: reported by parse_bounded_json
  }

 private:
  void check_depth() const {
    if (depth_ > max_depth_)
      refuse_or_abort(refuse_, "nesting deeper than " + std::to_string(max_depth_) + " levels");
  }
  bool value() {
    check_depth();
    if (++values_ > max_values_)
      refuse_or_abort(refuse_, "more than " + std::to_string(max_values_) + " JSON values");
    return true;
  }
  bool open() {
    check_depth();
    ++depth_;
    return true;
  }
  bool close() {
    --depth_;
    return true;
  }
  int max_depth_;
  std::size_t max_values_;
  const std::function<void(const std::string&)>& refuse_;
  int depth_ = 0;
  std::size_t values_ = 0;
};

inline nlohmann::json parse_bounded_json(std::string_view text, int max_depth,
                                         std::size_t max_values,
                                         const std::function<void(const std::string&)>& refuse) {
  using json = nlohmann::json;
  try {
    BoundedJsonCheck check(max_depth, max_values, refuse);
    json::sax_parse(text, &check);  // linear; throws at the first cap or syntax error
    return json::parse(text);       // within the caps: the document itself
  } catch (const json::exception& e) {
    // nlohmann's text: "[json.exception.parse_error.101] parse error at line 1, column 2: ..."
    std::string what = e.what();
    const std::size_t close = what.find("] ");
    if (close != std::string::npos && what.rfind("[json.exception", 0) == 0)
      what.erase(0, close + 2);
    if (what.size() > 200) what = what.substr(0, 200) + "...";
    refuse_or_abort(refuse, "not valid JSON: " + what);
  }
}

}  // namespace twinccl::trace::detail
