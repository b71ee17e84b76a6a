// Internal to the PyTorch trace importer (torch_import.h): a profiler trace's JSON read as a
// stream (torch_json.cc), so that memory follows the events the importer keeps, not the file.
//
//   TorchJsonTop top = stream_torch_json(std::string_view(text), caps, refuse,
//       [&] { /* a "traceEvents" array begins */ },
//       [&](std::size_t i, const nlohmann::json& event) { /* traceEvents[i], filtered */ });
//
// Each element of the top-level "traceEvents" array is built on its own (only the fields the
// importer reads: "name", "cat", "ts", "dur", "tid" and, in "args", the keys of
// torch_json.cc's kArgsKept), handed to `on_event`, then dropped; of "distributedInfo", "rank"
// and "world_size" are built; every other value is only counted. What is built of one event is
// capped (2^20 values). The caps (nesting, values, bytes: twinccl/bounded_json.h) and JSON syntax
// are checked on the whole text, and refused (through `refuse`) before any error `on_event` throws:
// a ConfigError from `on_event` is held (TorchJsonTop::held), no later event is handed over, and
// the caller throws it after its checks of the top level -- the precedence of an importer that
// parses the whole file, then reads it.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <istream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "json_fields.h"
#include "twinccl/bounded_json.h"

namespace twinccl::trace::detail {

// What the top level held.
struct TorchJsonTop {
  bool object = false;        // the document is an object
  std::string not_object;     // else what it is: "an array", "number 7"
  nlohmann::json info;        // "distributedInfo" (the last one), null when absent
  bool events_array = false;  // "traceEvents" (the last one) is an array
  std::exception_ptr held;    // the first ConfigError of on_event: the caller throws it after
                              // its own checks of the top level
};

using TorchJsonEvent = std::function<void(std::size_t index, const nlohmann::json& event)>;

// `input`: the text (std::string_view) or a stream (std::istream&; a gzip error of its buffer
// propagates).
template <class Input>
TorchJsonTop stream_torch_json(Input&& input, const JsonCaps& caps, const JsonRefuse& refuse,
                               const std::function<void()>& on_events_start,
                               const TorchJsonEvent& on_event);

}  // namespace twinccl::trace::detail
