// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "safe_output.hpp"

#include <iostream>

namespace weft::tool {

void SafeOutputBuffer::finish() {
  if (held_c2_) {
    held_c2_ = false;
    sink_->sputc(static_cast<char>(0xC2));
  }
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

bool SafeOutputBuffer::put_escape(unsigned char low) {
  constexpr char kHex[] = "0123456789abcdef";
  const char escape[] = {'\\', 'u', '0', '0', kHex[low >> 4], kHex[low & 15]};
  return sink_->sputn(escape, sizeof escape) == static_cast<std::streamsize>(sizeof escape);
}

bool SafeOutputBuffer::put(unsigned char c) {
  if (held_c2_) {
    held_c2_ = false;
    if (c >= 0x80 && c <= 0x9F) return put_escape(c);  // U+0080..U+009F
    if (traits_type::eq_int_type(sink_->sputc(static_cast<char>(0xC2)), traits_type::eof())) return false;
  }
  if (c == 0xC2) {
    held_c2_ = true;
    return true;
  }
  if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7F) return put_escape(c);
  return !traits_type::eq_int_type(sink_->sputc(static_cast<char>(c)), traits_type::eof());
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
