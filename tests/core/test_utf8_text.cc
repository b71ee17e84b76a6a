// Emitted text is valid UTF-8 (twinccl/utf8_text.h): foreign bytes become \xNN, valid characters
// stay, cuts keep whole characters, and a JSON document with Latin-1 bytes in its strings or keys
// dumps instead of throwing nlohmann's "invalid UTF-8 byte" error (what `perf -J` with
// NCCL_DEBUG_FILE=/tmp/caf\xe9.log did).
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "twinccl/utf8_text.h"

using namespace twinccl;

TEST_CASE("valid_utf8 escapes foreign bytes and keeps characters", "[utf8]") {
  CHECK(valid_utf8("plain") == "plain");
  CHECK(valid_utf8("caf\xc3\xa9") == "caf\xc3\xa9");                    // é in UTF-8
  CHECK(valid_utf8("caf\xe9.log") == "caf\\xe9.log");                   // é in Latin-1
  CHECK(valid_utf8("\xf0\x9f\x98\x80") == "\xf0\x9f\x98\x80");          // U+1F600
  CHECK(valid_utf8("\xc0\xaf") == "\\xc0\\xaf");                        // overlong '/'
  CHECK(valid_utf8("\xed\xa0\x80") == "\\xed\\xa0\\x80");               // a surrogate
  CHECK(valid_utf8("\xf4\x90\x80\x80") == "\\xf4\\x90\\x80\\x80");      // above U+10FFFF
  CHECK(valid_utf8("\xe2\x82") == "\\xe2\\x82");                        // a cut character
  CHECK(valid_utf8(std::string("a\0b", 3)) == std::string("a\0b", 3));  // NUL is valid UTF-8
  CHECK(is_valid_utf8("caf\xc3\xa9"));
  CHECK_FALSE(is_valid_utf8("caf\xe9"));
}

TEST_CASE("cut_utf8 cuts on a character boundary", "[utf8]") {
  std::string e_acute;
  for (int i = 0; i < 2047; ++i) e_acute += "\xc3\xa9";  // 4094 bytes
  const std::string cut = cut_utf8(e_acute, 4093);
  CHECK(cut.size() == 4092);
  CHECK(is_valid_utf8(cut));
  CHECK(cut_utf8("abc", 2) == "ab");
  CHECK(cut_utf8("abc", 10) == "abc");
  CHECK(cut_utf8("\xf0\x9f\x98\x80x", 3).empty());
  CHECK(cut_utf8("\xf0\x9f\x98\x80x", 4) == "\xf0\x9f\x98\x80");
  CHECK(cut_utf8("\x80\x80\x80\x80\x80", 3) == "\x80\x80\x80");  // foreign bytes: a plain cut
}

TEST_CASE("json_dump makes every string and key valid UTF-8", "[utf8]") {
  nlohmann::json j;
  j["env"]["NCCL_DEBUG_FILE"] = "/tmp/nccl-caf\xe9.log";
  j["args"] = {"-J", "out-\xff.json"};
  j["caf\xe9"] = 1;
  CHECK_THROWS(j.dump());  // what happened before
  const std::string text = json_dump(j, 2);
  CHECK(is_valid_utf8(text));
  const nlohmann::json back = nlohmann::json::parse(text);
  CHECK(back["env"]["NCCL_DEBUG_FILE"] == "/tmp/nccl-caf\\xe9.log");
  CHECK(back["args"][1] == "out-\\xff.json");
  CHECK(back["caf\\xe9"] == 1);
}
