// The bounded JSON reader (twinccl/bounded_json.h): caps refused while parsing, with the line and
// column of the value that passed them; syntax errors as one bounded line.
#include <catch2/catch.hpp>
#include <sstream>
#include <stdexcept>
#include <string>

#include "twinccl/bounded_json.h"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using twinccl::JsonCaps;

namespace {

struct Refused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const twinccl::JsonRefuse refuse = [](const std::string& why) { throw Refused(why); };

std::string error_of(const std::string& text, const JsonCaps& caps = {}) {
  try {
    twinccl::parse_bounded_json(text, caps, refuse);
  } catch (const Refused& e) {
    return e.what();
  }
  return "(no error)";
}

// The same text streamed into a handler that keeps nothing.
std::string stream_error_of(const std::string& text, const JsonCaps& caps) {
  std::istringstream in(text);
  nlohmann::detail::json_sax_acceptor<nlohmann::json> accept;
  try {
    twinccl::sax_parse_bounded(in, caps, refuse, accept);
  } catch (const Refused& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("bounded JSON: caps are refused with the line and column of the value") {
  const JsonCaps depth2{.max_depth = 2};
  CHECK(error_of("[\n [[1]]]", depth2) == "nesting deeper than 2 levels at line 2, column 3");
  CHECK(error_of("[[1], [2]]", depth2) == "(no error)");
  // Arrays and objects count as values; a number's end is known one character later.
  CHECK(error_of("[1,\n22,\n3]", {.max_values = 3}) ==
        "more than 3 JSON values at line 3, column 1");
  CHECK(error_of("[1,\n22\n,3]", {.max_values = 2}) ==
        "more than 2 JSON values at line 2, column 2");
  CHECK(error_of("[[], {}, true]", {.max_values = 2}) ==
        "more than 2 JSON values at line 1, column 6");
  CHECK(error_of("{\"a\":\n {\"c\": 2, \"d\": 3}}", {.max_object_members = 1}) ==
        "an object with more than 1 fields at line 2, column 13");
  // A stream is read in blocks of 64 KiB: the same places past the first block.
  std::string lines = "[";
  for (int i = 0; i < 30000; ++i) lines += "1,\n";
  CHECK(stream_error_of(lines + "1]", {.max_values = 25000}) ==
        "more than 25000 JSON values at line 25000, column 1");
  CHECK_THAT(stream_error_of(lines + "x]", {}),
             StartsWith("not valid JSON at line 30001, column 1"));
  for (const std::string& text :
       {std::string("[\n [[1]]]"), std::string("[1,\n22\n,3]"), lines + "1]"}) {
    const JsonCaps caps{.max_depth = 2, .max_values = 29999};
    CHECK(stream_error_of(text, caps) == error_of(text, caps));
  }
}

TEST_CASE("bounded JSON: syntax errors are one bounded line naming where") {
  CHECK_THAT(error_of("[1,\n tru]"),  // nlohmann's token is what it read since "1"
             StartsWith("not valid JSON at line 2, column 5: syntax error while parsing value - "
                        "invalid literal; last read: \"1,<U+000A> tru]\""));
  CHECK(error_of("[1,\n 1e309]") ==
        "not valid JSON at line 2, column 6: number overflow parsing \"1e309\"");
  CHECK_THAT(error_of("{} x"), StartsWith("not valid JSON at line 1, column 4: "));
  const std::string long_string = error_of("[\"" + std::string(1 << 20, 'x'));
  CHECK_THAT(long_string,
             StartsWith("not valid JSON at line 1, column 1048579") && Contains("(1048577 bytes)"));
  CHECK(long_string.size() < 300);
}

TEST_CASE("bounded JSON: the document is nlohmann's, in the type asked for") {
  const std::string text = R"({"z": [1, 2.5, "x", null, {"k": false}], "a": {}})";
  CHECK(twinccl::parse_bounded_json(text, {}, refuse) == nlohmann::json::parse(text));
  const auto ordered = twinccl::parse_bounded_json<nlohmann::ordered_json>(text, {}, refuse);
  CHECK(ordered.begin().key() == "z");
  CHECK(ordered.dump() == nlohmann::ordered_json::parse(text).dump());
}
