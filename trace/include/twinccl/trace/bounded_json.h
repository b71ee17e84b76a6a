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

inline nlohmann::json parse_bounded_json(std::string_view text, int max_depth,
                                         std::size_t max_values,
                                         const std::function<void(const std::string&)>& refuse) {
  using json = nlohmann::json;
  std::size_t values = 0;
  const json::parser_callback_t bounded = [&](int depth, json::parse_event_t event, json&) {
    if (depth > max_depth)
      refuse_or_abort(refuse, "nesting deeper than " + std::to_string(max_depth) + " levels");
    if (event == json::parse_event_t::value && ++values > max_values) {
      refuse_or_abort(refuse, "more than " + std::to_string(max_values) + " JSON values");
    }
    return true;
  };
  try {
    return json::parse(text, bounded);
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
