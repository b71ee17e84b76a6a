// Internal to the file readers: what every topology file goes through before a parser sees it,
// and how a bad value is shown in an error. (JSON's caps are checked while parsing, by the bounded
// reader twinccl/bounded_json.h.)
//
// How it works. The XML parser recurses, so a file nested 100k deep crashes it. One linear pass
// over the text, outside comments and attribute values, counts the nesting of elements and refuses
// a file past limits::max_nesting_depth before parsing, naming the line.
#pragma once

#include <string>
#include <string_view>

namespace twinccl::topo::input {

// ConfigError "<source>:<line>: ..." for XML elements nested deeper than max_nesting_depth.
void check_xml_shape(std::string_view text, const std::string& source);

// `text` quoted for an error message (core's quoted_text): at most limits::max_echo_bytes bytes,
// control characters escaped, and the full length stated when cut: "\"AAAA...\" (10000000 bytes)".
// Names are quoted with '\'' ("unknown vertex 'leaf9'"), values with '"'.
std::string echo(std::string_view text, char quote = '"');

}  // namespace twinccl::topo::input
