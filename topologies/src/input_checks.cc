// Checks every topology file goes through before parsing (see input_checks.h).
#include "input_checks.h"

#include <algorithm>

#include "twinccl/call_site_text.h"
#include "twinccl/errors.h"
#include "twinccl/topologies/limits.h"

namespace twinccl::topo::input {

// Mirrors how Boost's rapidxml splits markup (its parse_node, parse_element, parse_doctype): an
// element start is a name (up to space, '/', '>', '?'), then name="value" or name='value'
// attributes, then '>' (one level deeper) or "/>". Where rapidxml would throw, the scan stops:
// the parser never gets deeper than the point of its error.
void check_xml_shape(std::string_view text, const std::string& source) {
  const std::size_t n = text.size();
  int depth = 0;
  std::size_t i = 0;
  const auto at = [&](std::size_t k) { return k < n ? text[k] : '\0'; };
  const auto is_space = [](char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; };
  const auto line = [&] {
    return 1 + static_cast<int>(std::count(text.begin(), text.begin() + i, '\n'));
  };
  // Moves i past `end` searched from `from`; false (stop) when it is missing.
  const auto skip_past = [&](std::string_view end, std::size_t from) {
    const std::size_t found = text.find(end, std::min(from, n));
    if (found == std::string_view::npos) return false;
    i = found + end.size();
    return true;
  };
  while (i < n) {
    if (text[i] != '<') {
      ++i;
      continue;
    }
    const std::string_view rest = text.substr(i);
    bool more = true;
    if (rest.substr(0, 2) == "</") {
      if (depth > 0) --depth;
      more = skip_past(">", i + 2);
    } else if (rest.substr(0, 2) == "<?") {
      more = skip_past("?>", i + 2);
    } else if (rest.substr(0, 4) == "<!--") {
      more = skip_past("-->", i + 4);
    } else if (rest.substr(0, 9) == "<![CDATA[") {
      more = skip_past("]]>", i + 9);
    } else if (rest.substr(0, 9) == "<!DOCTYPE" && is_space(at(i + 9))) {
      int brackets = 0;  // '>' inside [...] does not end a DOCTYPE
      for (i += 10; i < n && (text[i] != '>' || brackets > 0); ++i) {
        brackets += text[i] == '[' ? 1 : text[i] == ']' ? -1 : 0;
      }
      ++i;
    } else if (rest.substr(0, 2) == "<!") {
      more = skip_past(">", i + 2);
    } else {
      ++i;
      const std::size_t name = i;
      while (i < n && !is_space(text[i]) && text[i] != '/' && text[i] != '>' && text[i] != '?') ++i;
      if (i == name) return;  // rapidxml: expected element name
      for (;;) {
        while (i < n && is_space(text[i])) ++i;
        const char c = at(i);
        if (c == '>') {
          ++i;
          if (++depth > limits::max_nesting_depth) {
            throw ConfigError(source + ":" + std::to_string(line()) + ": nested deeper than " +
                              std::to_string(limits::max_nesting_depth) +
                              " levels (the cap on XML elements)");
          }
          break;
        }
        if (c == '/' && at(i + 1) == '>') {
          i += 2;
          break;
        }
        if (c == '\0' || c == '/' || c == '<' || c == '=' || c == '?' || c == '!') return;
        while (i < n && !is_space(text[i]) &&
               std::string_view("/<>=?!").find(text[i]) == std::string_view::npos) {
          ++i;  // attribute name
        }
        while (i < n && is_space(text[i])) ++i;
        if (at(i) != '=') return;
        ++i;
        while (i < n && is_space(text[i])) ++i;
        const char quote = at(i);
        if ((quote != '"' && quote != '\'') || !skip_past(std::string_view(&quote, 1), i + 1)) {
          return;
        }
      }
    }
    if (!more) return;
  }
}

std::string echo(std::string_view text, char quote) {
  return quoted_text(text, limits::max_echo_bytes, true, quote);  // core's one rule
}

}  // namespace twinccl::topo::input
