// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Readers for what euler2d writes, as its tests check it: PNG images (libpng),
// XML (a small strict parser: enough to say a .vti is well formed and to
// walk it) and VTK's base64 arrays.
//
//   const Png png = read_png("d.png");                  // png.at(x, y): {r, g, b}
//   const XmlElement vti = parse_xml(read_text("s.vti"));  // throws at malformed XML
//   const std::vector<double> rho = vtk_binary_array(vti.find("DataArray")->text);
#pragma once

#include <png.h>

#include <array>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace weft::euler::test {

struct Png {
  std::size_t width = 0, height = 0;
  std::vector<std::uint8_t> rgb;
  std::array<std::uint8_t, 3> at(std::size_t x, std::size_t y) const {
    const std::size_t k = 3 * (y * width + x);
    return {rgb[k], rgb[k + 1], rgb[k + 2]};
  }
};

inline Png read_png(const std::string& path) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  if (png_image_begin_read_from_file(&image, path.c_str()) == 0)
    throw std::runtime_error("read_png: '" + path + "': " + image.message);
  image.format = PNG_FORMAT_RGB;
  Png png{image.width, image.height, std::vector<std::uint8_t>(PNG_IMAGE_SIZE(image))};
  if (png_image_finish_read(&image, nullptr, png.rgb.data(), 0, nullptr) == 0)
    throw std::runtime_error("read_png: '" + path + "': " + image.message);
  return png;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("read_text: cannot open '" + path + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

struct XmlElement {
  std::string name;
  std::map<std::string, std::string> attributes;
  std::string text;  // character data directly inside, entities left as written
  std::vector<XmlElement> children;

  // The first element named `name` in this one's subtree (itself included), or null.
  const XmlElement* find(std::string_view wanted) const {
    if (name == wanted) return this;
    for (const XmlElement& c : children)
      if (const XmlElement* found = c.find(wanted)) return found;
    return nullptr;
  }
  // Every element named `wanted` in the subtree, in document order.
  std::vector<const XmlElement*> find_all(std::string_view wanted) const {
    std::vector<const XmlElement*> found;
    if (name == wanted) found.push_back(this);
    for (const XmlElement& c : children)
      for (const XmlElement* e : c.find_all(wanted)) found.push_back(e);
    return found;
  }
  std::string attribute(const std::string& key) const {
    const auto it = attributes.find(key);
    return it == attributes.end() ? std::string() : it->second;
  }
};

namespace detail {

class XmlParser {
 public:
  explicit XmlParser(std::string_view xml) : xml_(xml) {}

  XmlElement document() {
    skip_space();
    if (xml_.substr(at_, 5) == "<?xml") {
      const std::size_t end = xml_.find("?>", at_);
      if (end == std::string_view::npos) fail("an unclosed <?xml declaration");
      at_ = end + 2;
    }
    skip_space();
    XmlElement root = element();
    skip_space();
    if (at_ != xml_.size()) fail("text after the root element");
    return root;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error("parse_xml: " + what + " at byte " + std::to_string(at_));
  }
  void skip_space() {
    while (at_ < xml_.size() && std::strchr(" \t\r\n", xml_[at_]) != nullptr) ++at_;
  }
  void expect(char c) {
    if (at_ >= xml_.size() || xml_[at_] != c) fail(std::string("expected '") + c + "'");
    ++at_;
  }
  std::string name() {
    const std::size_t start = at_;
    while (at_ < xml_.size() && (std::isalnum(static_cast<unsigned char>(xml_[at_])) != 0 ||
                                 xml_[at_] == '_' || xml_[at_] == ':' || xml_[at_] == '-'))
      ++at_;
    if (at_ == start) fail("expected a name");
    return std::string(xml_.substr(start, at_ - start));
  }
  XmlElement element() {
    XmlElement e;
    expect('<');
    e.name = name();
    for (;;) {
      skip_space();
      if (xml_.substr(at_, 2) == "/>") {
        at_ += 2;
        return e;
      }
      if (at_ < xml_.size() && xml_[at_] == '>') break;
      const std::string key = name();
      expect('=');
      expect('"');
      const std::size_t end = xml_.find('"', at_);
      if (end == std::string_view::npos) fail("an unclosed attribute value");
      if (!e.attributes.emplace(key, std::string(xml_.substr(at_, end - at_))).second)
        fail("attribute " + key + " given twice");
      at_ = end + 1;
    }
    ++at_;  // '>'
    for (;;) {
      const std::size_t lt = xml_.find('<', at_);
      if (lt == std::string_view::npos) fail("<" + e.name + "> is never closed");
      e.text += xml_.substr(at_, lt - at_);
      at_ = lt;
      if (xml_.substr(at_, 2) == "</") {
        at_ += 2;
        if (name() != e.name) fail("a closing tag that does not match <" + e.name + ">");
        skip_space();
        expect('>');
        return e;
      }
      e.children.push_back(element());
    }
  }

  std::string_view xml_;
  std::size_t at_ = 0;
};

// Bytes of base64 text, four characters at a time; '=' ends a group early,
// so that separately padded encodings decode one after the other.
inline std::vector<std::uint8_t> base64_decode(std::string_view text) {
  const auto digit = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  if (text.size() % 4 != 0) throw std::runtime_error("base64: a length that is not a multiple of 4");
  std::vector<std::uint8_t> bytes;
  for (std::size_t k = 0; k < text.size(); k += 4) {
    unsigned value = 0;
    std::size_t count = 0;
    for (std::size_t c = 0; c < 4; ++c) {
      const int d = text[k + c] == '=' ? 0 : digit(text[k + c]);
      if (d < 0) throw std::runtime_error("base64: '" + std::string(1, text[k + c]) + "' is not a digit");
      if (text[k + c] != '=') ++count;
      value = (value << 6) | static_cast<unsigned>(d);
    }
    if (count < 2) throw std::runtime_error("base64: a group of fewer than 2 digits");
    for (std::size_t b = 0; b + 1 < count; ++b)
      bytes.push_back(static_cast<std::uint8_t>(value >> (16 - 8 * b)));
  }
  return bytes;
}

}  // namespace detail

// Throws std::runtime_error naming the byte where `xml` stops being well formed.
inline XmlElement parse_xml(std::string_view xml) { return detail::XmlParser(xml).document(); }

// The values of a VTK "binary" Float64 DataArray (header_type UInt64, host
// byte order): checks that its byte count header matches what follows.
inline std::vector<double> vtk_binary_array(std::string_view text) {
  while (!text.empty() && std::strchr(" \t\r\n", text.front()) != nullptr) text.remove_prefix(1);
  while (!text.empty() && std::strchr(" \t\r\n", text.back()) != nullptr) text.remove_suffix(1);
  if (text.size() < 12) throw std::runtime_error("vtk_binary_array: no byte count header");
  const std::vector<std::uint8_t> header = detail::base64_decode(text.substr(0, 12));
  const std::vector<std::uint8_t> data = detail::base64_decode(text.substr(12));
  std::uint64_t bytes = 0;
  std::memcpy(&bytes, header.data(), sizeof bytes);
  if (header.size() != 8 || bytes != data.size() || data.size() % sizeof(double) != 0) {
    throw std::runtime_error("vtk_binary_array: the header says " + std::to_string(bytes) + " bytes, " +
                             std::to_string(data.size()) + " follow");
  }
  std::vector<double> values(data.size() / sizeof(double));
  std::memcpy(values.data(), data.data(), data.size());
  return values;
}

}  // namespace weft::euler::test
