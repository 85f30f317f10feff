// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// parse_json_document: nlohmann's SAX parser feeding a document builder that
// counts depth and refuses repeated keys as it goes (one pass, no callback:
// nlohmann's parse callback rescans the parent array whenever an object
// closes, which made loading quadratic).
#include <weft/graph/json_document.hpp>

#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace weft {

std::string_view without_json_tag(std::string_view message) noexcept {
  constexpr std::string_view kTag = "[json.exception.";
  if (message.substr(0, kTag.size()) != kTag) return message;
  const std::size_t end = message.find("] ");
  return end == std::string_view::npos ? message : message.substr(end + 2);
}

using json = nlohmann::json;

void release_json_document(json& doc) noexcept {
  if (doc.is_array()) {
    json::array_t& items = doc.get_ref<json::array_t&>();
    while (!items.empty()) {
      release_json_document(items.back());
      items.pop_back();
    }
  } else if (doc.is_object()) {
    json::object_t& members = doc.get_ref<json::object_t&>();
    for (auto it = members.begin(); it != members.end();) {
      release_json_document(it->second);
      it = members.erase(it);
    }
  }
  doc = nullptr;  // an empty container's teardown reserves nothing
}

namespace {

class DocumentBuilder {
 public:
  DocumentBuilder(std::string_view what, int max_depth) : what_(what), max_depth_(max_depth) {}

  bool null() { return add(json(nullptr)); }
  bool boolean(bool value) { return add(json(value)); }
  bool number_integer(json::number_integer_t value) { return add(json(value)); }
  bool number_unsigned(json::number_unsigned_t value) { return add(json(value)); }
  bool number_float(json::number_float_t value, const json::string_t&) { return add(json(value)); }
  bool string(json::string_t& value) { return add(json(std::move(value))); }
  bool binary(json::binary_t& value) { return add(json::binary(std::move(value))); }
  bool start_object(std::size_t) { return open(json::object()); }
  bool start_array(std::size_t) { return open(json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(json::string_t& name) {
    Frame& top = frames_.back();
    if (top.value->get_ref<const json::object_t&>().count(name) != 0)
      return refuse(path() + ": the key \"" + name + "\" appears twice");
    top.key = std::move(name);
    return true;
  }

  bool parse_error(std::size_t, const std::string&, const json::exception& e) {
    const std::string text(without_json_tag(e.what()));
    // 101-199: syntax; 406 (out_of_range): a number no double holds.
    error_ =
        std::string(what_) + (dynamic_cast<const json::parse_error*>(&e) ? ": syntax error: " : ": ") + text;
    return false;
  }

  json take_root() { return std::move(root_); }
  // What was built so far, emptied without allocating (memory ran out).
  void empty_without_allocating() noexcept { release_json_document(root_); }
  const std::string& error() const noexcept { return error_; }

 private:
  struct Frame {
    json* value;
    std::string key;  // in an object: the key whose value comes next
  };

  // Places `value` where the parser is and returns where it now lives.
  json* place(json&& value) {
    if (frames_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Frame& top = frames_.back();
    if (top.value->is_array()) {
      json::array_t& items = top.value->get_ref<json::array_t&>();
      items.push_back(std::move(value));
      return &items.back();
    }
    // The key stays for path(); the pointer stays valid: a map does not move
    // its elements.
    return &top.value->get_ref<json::object_t&>().emplace(top.key, std::move(value)).first->second;
  }
  bool add(json&& value) {
    place(std::move(value));
    return true;
  }
  bool open(json&& container) {
    if (static_cast<int>(frames_.size()) >= max_depth_) {
      return refuse(path() + ": nesting deeper than " + std::to_string(max_depth_) +
                    " levels of arrays and objects; this is not a weft document");
    }
    // Elements of an open container's parent do not move while it is open:
    // only the innermost container grows.
    json* at = place(std::move(container));
    frames_.push_back(Frame{at, {}});
    return true;
  }
  bool close() {
    frames_.pop_back();
    return true;
  }
  bool refuse(std::string message) {
    error_ = std::string(what_) + ": " + std::move(message);
    return false;
  }
  // Where the parser is, in the readers' notation: nodes[3].name.
  std::string path() const {
    std::string out = "document";
    for (std::size_t i = 0; i + 1 < frames_.size(); ++i) {
      const json& parent = *frames_[i].value;
      if (parent.is_array()) {
        out += "[" + std::to_string(parent.size() - 1) + "]";
      } else {
        out = (i == 0 ? "" : out + ".") + frames_[i].key;
      }
    }
    return out;
  }

  std::string_view what_;
  int max_depth_;
  json root_;
  std::vector<Frame> frames_;
  std::string error_;
};

}  // namespace

json parse_json_document(std::string_view text, std::string_view what, int max_depth) {
  DocumentBuilder builder(what, max_depth);
  bool parsed = false;
  try {
    parsed = json::sax_parse(text.begin(), text.end(), &builder, json::input_format_t::json, /*strict=*/true);
  } catch (const std::bad_alloc&) {
    builder.empty_without_allocating();
    throw;
  }
  if (!parsed) throw std::invalid_argument(builder.error());
  return builder.take_root();
}

}  // namespace weft
