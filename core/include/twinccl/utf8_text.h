// Text the program emits (JSON, CSV, tables, messages) is valid UTF-8: a byte that is not part of
// a valid UTF-8 character (a Latin-1 file name, an environment variable) is written as the four
// characters \xNN, and a cut keeps whole characters.
//
//   out << valid_utf8(path);                        // "/tmp/caf\xe9.log" for a Latin-1 name
//   name = cut_utf8(name, 4093) + "...";            // never half a character
//   out << json_dump(doc, 2);                       // every string and key of an nlohmann::json
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace twinccl {

// `text` with every byte that is not part of a valid UTF-8 character (overlong forms, surrogates
// and code points above U+10FFFF included) replaced by "\xNN"; valid text is returned unchanged.
std::string valid_utf8(std::string_view text);

// Whether `text` is valid UTF-8 already.
bool is_valid_utf8(std::string_view text);

// The longest prefix of `text` of at most `max_bytes` bytes that ends on a character boundary.
std::string cut_utf8(std::string_view text, std::size_t max_bytes);

// Every string and object key of a JSON document (nlohmann::json; a template so that core does
// not depend on the JSON library) made valid UTF-8 with valid_utf8.
template <class Json>
void make_valid_utf8(Json& j) {
  if (j.is_string()) {
    auto& s = j.template get_ref<typename Json::string_t&>();
    if (!is_valid_utf8(s)) s = valid_utf8(s);
  } else if (j.is_array()) {
    for (auto& e : j) make_valid_utf8(e);
  } else if (j.is_object()) {
    bool keys_valid = true;
    for (auto it = j.begin(); it != j.end(); ++it) {
      keys_valid = keys_valid && is_valid_utf8(it.key());
      make_valid_utf8(it.value());
    }
    if (keys_valid) return;
    Json fixed = Json::object();
    for (auto it = j.begin(); it != j.end(); ++it)
      fixed[valid_utf8(it.key())] = std::move(it.value());
    j = std::move(fixed);
  }
}

// j.dump(indent) of the document with its text made valid UTF-8 (never the JSON library's
// "invalid UTF-8 byte" error).
template <class Json>
std::string json_dump(Json j, int indent = -1) {
  make_valid_utf8(j);
  return j.dump(indent);
}

}  // namespace twinccl
