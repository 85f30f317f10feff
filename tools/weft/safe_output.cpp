// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "safe_output.hpp"

#include <iostream>

namespace weft::tool {

namespace {

// What the bytes seen so far of a UTF-8 sequence make of it.
enum class Sequence { other, prefix, escaped };

// The code point of `bytes` when it is a sequence to escape; `prefix` when
// more bytes could still make it one.
Sequence classify(const unsigned char* bytes, int count, unsigned& code_point) {
  const unsigned char lead = bytes[0];
  if (count == 1) return lead == 0xC2 || lead == 0xD8 || lead == 0xE2 ? Sequence::prefix : Sequence::other;
  const unsigned char second = bytes[1];
  if (lead == 0xC2) {  // U+0080..U+009F: C1 controls
    code_point = second;
    return second >= 0x80 && second <= 0x9F ? Sequence::escaped : Sequence::other;
  }
  if (lead == 0xD8) {  // U+061C: Arabic letter mark
    code_point = 0x61C;
    return second == 0x9C ? Sequence::escaped : Sequence::other;
  }
  // lead 0xE2: U+2000..U+207F
  if (second != 0x80 && second != 0x81) return Sequence::other;
  if (count == 2) return Sequence::prefix;
  const unsigned char third = bytes[2];
  code_point = 0x2000u + ((second & 0x3Fu) << 6) + (third & 0x3Fu);
  const bool reorders = code_point == 0x200E || code_point == 0x200F ||
                        (code_point >= 0x2028 && code_point <= 0x202E) ||
                        (code_point >= 0x2066 && code_point <= 0x2069);
  return reorders && (third & 0xC0) == 0x80 ? Sequence::escaped : Sequence::other;
}

}  // namespace

void SafeOutputBuffer::finish() {
  release_held();
  sink_->pubsync();
}

SafeOutputBuffer::int_type SafeOutputBuffer::overflow(int_type ch) {
  if (traits_type::eq_int_type(ch, traits_type::eof())) return traits_type::not_eof(ch);
  return put(static_cast<unsigned char>(traits_type::to_char_type(ch))) ? ch : traits_type::eof();
}

std::streamsize SafeOutputBuffer::xsputn(const char* text, std::streamsize count) {
  for (std::streamsize i = 0; i < count; ++i)
    if (!put(static_cast<unsigned char>(text[i]))) return i;
  return count;
}

bool SafeOutputBuffer::put_escape(unsigned code_point) {
  constexpr char kHex[] = "0123456789abcdef";
  const char escape[] = {'\\',
                         'u',
                         kHex[(code_point >> 12) & 15],
                         kHex[(code_point >> 8) & 15],
                         kHex[(code_point >> 4) & 15],
                         kHex[code_point & 15]};
  return sink_->sputn(escape, sizeof escape) == static_cast<std::streamsize>(sizeof escape);
}

bool SafeOutputBuffer::put_raw(unsigned char c) {
  return !traits_type::eq_int_type(sink_->sputc(static_cast<char>(c)), traits_type::eof());
}

bool SafeOutputBuffer::release_held() {
  const int count = held_count_;
  held_count_ = 0;
  for (int i = 0; i < count; ++i) {
    if (!put_raw(held_[i])) return false;
  }
  return true;
}

bool SafeOutputBuffer::put(unsigned char c) {
  if (held_count_ > 0) {
    const unsigned char bytes[3] = {held_[0], held_count_ > 1 ? held_[1] : c, c};
    const int count = held_count_ + 1;
    unsigned code_point = 0;
    switch (classify(bytes, count, code_point)) {
      case Sequence::escaped:
        held_count_ = 0;
        return put_escape(code_point);
      case Sequence::prefix:
        held_[held_count_++] = c;
        return true;
      case Sequence::other:
        if (!release_held()) return false;
        break;  // and `c` on its own, below: it may start a sequence itself
    }
  }
  unsigned ignored = 0;
  if (classify(&c, 1, ignored) == Sequence::prefix) {
    held_[0] = c;
    held_count_ = 1;
    return true;
  }
  if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F) return put_escape(c);
  return put_raw(c);
}

SafeStandardStreams::SafeStandardStreams() : out_(std::cout.rdbuf()), err_(std::cerr.rdbuf()) {
  std::cout.rdbuf(&out_);
  std::cerr.rdbuf(&err_);
}

SafeStandardStreams::~SafeStandardStreams() {
  out_.finish();
  err_.finish();
  // The filters hold the original buffers: give them back.
  std::cout.rdbuf(out_.sink());
  std::cerr.rdbuf(err_.sink());
}

}  // namespace weft::tool
