// A profiler trace's JSON, streamed (torch_json.h).
//
// How it works. The bounded reader (twinccl/bounded_json.h: the caps and JSON syntax) calls
// FilteredSax once per token. A stack of frames says
// where the parser is: the top-level object, the "traceEvents" array, one event, the event's
// "args", a value being built, or a value being skipped. A value is built (as a small
// nlohmann::json) only where the importer reads it; the event is handed over when it closes and
// its memory reused for the next one. An event whose "name" is not record_param_comms and whose
// "cat" is not a GPU activity (cpu_op, cuda_runtime, ac2g, python_function: most of a trace) is
// skipped from then on. (A DOM of the whole file would cost ~9x the text.)
#include "torch_json.h"

#include <array>
#include <exception>
#include <vector>

#include "twinccl/bounded_json.h"
#include "twinccl/errors.h"
#include "twinccl/utf8_text.h"

namespace twinccl::trace::detail {
namespace {

using json = nlohmann::json;

// The event fields and args keys the importer reads (torch_read.cc); everything else is skipped.
constexpr std::array<std::string_view, 6> kEventKept = {"name", "cat", "ts", "dur", "tid", "args"};
constexpr std::array<std::string_view, 18> kArgsKept = {"Collective name",
                                                        "dtype",
                                                        "In msg nelems",
                                                        "Out msg nelems",
                                                        "In split size",
                                                        "Out split size",
                                                        "Group size",
                                                        "Process Group Name",
                                                        "Process Group ID",
                                                        "Process Group Description",
                                                        "Process Group Ranks",
                                                        "Global rank start",
                                                        "Global rank stride",
                                                        "Rank",
                                                        "Src Rank",
                                                        "Dst Rank",
                                                        "External id",
                                                        "stream"};

template <std::size_t N>
bool listed(const std::array<std::string_view, N>& keys, const std::string& key) {
  for (std::string_view k : keys)
    if (k == key) return true;
  return false;
}

bool gpu_cat(const json& cat) {
  if (!cat.is_string()) return false;
  const auto& c = cat.get_ref<const std::string&>();
  return c == "kernel" || c == "gpu_memcpy" || c == "gpu_memset";
}

// Values built for one event or distributedInfo: a few dozen in a real trace; the fields read
// refuse lists past kMaxTraceRanks entries anyway.
constexpr std::size_t kMaxBuiltValues = std::size_t{1} << 20;

enum class Frame : std::uint8_t { root, info, events, event, args, kept, skipped };
enum class Into : std::uint8_t { skip, keep, document, info, events, element };

class FilteredSax final {
 public:
  FilteredSax(const JsonRefuse& refuse, const std::function<void()>& on_events_start,
              const TorchJsonEvent& on_event)
      : refuse_(refuse), on_events_start_(on_events_start), on_event_(on_event) {}

  TorchJsonTop top;

  bool null() {
    return scalar([] { return json(nullptr); });
  }
  bool boolean(bool b) {
    return scalar([b] { return json(b); });
  }
  bool number_integer(json::number_integer_t i) {
    return scalar([i] { return json(i); });
  }
  bool number_unsigned(json::number_unsigned_t u) {
    return scalar([u] { return json(u); });
  }
  bool number_float(json::number_float_t d, const json::string_t&) {
    return scalar([d] { return json(d); });
  }
  bool string(json::string_t& s) {
    return scalar([&s] { return json(s); });
  }
  bool binary(json::binary_t&) {
    return scalar([] { return json(); });
  }
  bool start_object(std::size_t) { return open(true); }
  bool start_array(std::size_t) { return open(false); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  bool key(json::string_t& k) {
    key_ = k;
    if (frames_.back() == Frame::event && (key_ == "name" || key_ == "cat") &&
        element_.contains(key_)) {
      hold_error("traceEvents[" + std::to_string(index_) + "]: '" + key_ +
                 "' appears twice in the event");
    }
    return true;
  }

 private:
  Into into() const {
    if (frames_.empty()) return Into::document;
    switch (frames_.back()) {
      case Frame::root:
        return key_ == "distributedInfo" ? Into::info
               : key_ == "traceEvents"   ? Into::events
                                         : Into::skip;
      case Frame::events:
        return top.held ? Into::skip : Into::element;
      case Frame::event:
        return !irrelevant_ && listed(kEventKept, key_) ? Into::keep : Into::skip;
      case Frame::info:
        return key_ == "rank" || key_ == "world_size" ? Into::keep : Into::skip;
      case Frame::args:
        return listed(kArgsKept, key_) ? Into::keep : Into::skip;
      case Frame::kept:
        return Into::keep;
      case Frame::skipped:
        break;
    }
    return Into::skip;
  }

  // Puts a value where the parser is: in the array or under the key being built.
  json* place(json v) {
    if (++built_ > kMaxBuiltValues) {
      refuse_((building_.front() == &top.info ? std::string("distributedInfo")
                                              : "traceEvents[" + std::to_string(index_) + "]") +
              ": more than " + std::to_string(kMaxBuiltValues) +
              " JSON values in the fields read (a profiler writes a few dozen)");
    }
    json& at = *building_.back();
    if (at.is_array()) {
      at.push_back(std::move(v));
      return &at.back();
    }
    json& slot = at[key_];  // a repeated key: the last one, as nlohmann's DOM keeps it
    slot = std::move(v);
    return &slot;
  }

  // After an event's "name" or "cat": no more fields of an event the importer ignores.
  void note_event_field() {
    if (frames_.back() != Frame::event || (key_ != "name" && key_ != "cat")) return;
    const auto name = element_.find("name");
    if (name == element_.end()) return;
    if (!name->is_string()) {
      irrelevant_ = true;
    } else if (name->get_ref<const std::string&>() != "record_param_comms") {
      const auto cat = element_.find("cat");
      if (cat != element_.end()) irrelevant_ = !gpu_cat(*cat);
    }
  }

  template <class Make>
  bool scalar(Make make) {
    switch (into()) {
      case Into::skip:
        break;
      case Into::document:
        top.not_object = shown(make());
        break;
      case Into::info:
        top.info = make();
        break;
      case Into::events:
        top.events_array = false;
        break;
      case Into::element:
        element_ = make();
        emit();
        break;
      case Into::keep:
        place(make());
        note_event_field();
        break;
    }
    return true;
  }

  bool open(bool object) {
    Frame frame = Frame::skipped;
    switch (into()) {
      case Into::skip:
        break;
      case Into::document:
        top.object = object;
        if (object)
          frame = Frame::root;
        else
          top.not_object = "an array";
        break;
      case Into::info:  // only "rank" and "world_size" are read ("pg_config" can be long)
        top.info = object ? json::object() : json::array();
        if (object) {
          building_.assign(1, &top.info);
          built_ = 0;
          frame = Frame::info;
        }
        break;
      case Into::events:
        top.events_array = !object;
        if (!object) {
          index_ = 0;
          top.held = nullptr;  // a repeated "traceEvents": the last one counts
          on_events_start_();
          frame = Frame::events;
        }
        break;
      case Into::element:
        element_ = object ? json::object() : json::array();
        building_.assign(1, &element_);
        built_ = 0;
        irrelevant_ = false;
        frame = object ? Frame::event : Frame::kept;
        break;
      case Into::keep: {
        const bool args = frames_.back() == Frame::event && key_ == "args" && object;
        building_.push_back(place(object ? json::object() : json::array()));
        frame = args ? Frame::args : Frame::kept;
        break;
      }
    }
    frames_.push_back(frame);
    return true;
  }

  bool close() {
    const Frame frame = frames_.back();
    frames_.pop_back();
    if (frame == Frame::info || frame == Frame::event || frame == Frame::args ||
        frame == Frame::kept) {
      building_.pop_back();
      if (building_.empty() && !frames_.empty() && frames_.back() == Frame::events) emit();
    }
    return true;
  }

  void emit() {
    if (!top.held) {
      try {
        on_event_(index_, element_);
      } catch (const ConfigError&) {
        top.held = std::current_exception();
      }
    }
    ++index_;
  }

  void hold_error(const std::string& why) {
    if (top.held) return;
    try {
      refuse_(why);
    } catch (const ConfigError&) {
      top.held = std::current_exception();
    }
  }

  const JsonRefuse& refuse_;
  const std::function<void()>& on_events_start_;
  const TorchJsonEvent& on_event_;
  std::vector<Frame> frames_;
  std::vector<json*> building_;  // the containers being built, innermost last
  json element_;                 // the traceEvents element being built
  std::string key_;              // the last object key
  std::size_t index_ = 0, built_ = 0;
  bool irrelevant_ = false;
};

}  // namespace

template <class Input>
TorchJsonTop stream_torch_json(Input&& input, const JsonCaps& caps, const JsonRefuse& refuse,
                               const std::function<void()>& on_events_start,
                               const TorchJsonEvent& on_event) {
  FilteredSax sax(refuse, on_events_start, on_event);
  sax_parse_bounded(input, caps, refuse, sax);
  return std::move(sax.top);
}
template TorchJsonTop stream_torch_json(std::string_view&&, const JsonCaps&, const JsonRefuse&,
                                        const std::function<void()>&, const TorchJsonEvent&);
template TorchJsonTop stream_torch_json(std::istream&, const JsonCaps&, const JsonRefuse&,
                                        const std::function<void()>&, const TorchJsonEvent&);

std::string shown(const json& v) {
  if (v.is_structured()) return std::string("an ") + v.type_name();
  std::string text = json_dump(v);
  if (text.size() > 40) text = cut_utf8(text, 40) + "...";
  return std::string(v.type_name()) + " " + text;
}

}  // namespace twinccl::trace::detail
