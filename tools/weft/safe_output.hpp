// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the program prints is text a terminal shows as text, whatever the
// input held: a stream buffer in front of stdout and stderr that passes
// newlines and tabs and writes every other control character (C0, DEL, and
// the UTF-8 encoded C1 range U+0080..U+009F, which some terminals obey) as
// its JSON escape, "\u001b". JSON output stays valid: such characters can
// only occur inside its strings, where that escape means the same character.
#pragma once

#include <streambuf>

namespace weft::tool {

class SafeOutputBuffer : public std::streambuf {
 public:
  explicit SafeOutputBuffer(std::streambuf* sink) : sink_(sink) {}
  ~SafeOutputBuffer() override { finish(); }
  SafeOutputBuffer(const SafeOutputBuffer&) = delete;
  SafeOutputBuffer& operator=(const SafeOutputBuffer&) = delete;

  // Writes out a byte held back at the end (a lone 0xC2) and flushes.
  void finish();
  std::streambuf* sink() const noexcept { return sink_; }

 protected:
  int_type overflow(int_type ch) override;
  std::streamsize xsputn(const char* text, std::streamsize count) override;
  int sync() override { return sink_->pubsync(); }

 private:
  bool put(unsigned char c);
  bool put_escape(unsigned char code_point_low_byte);

  std::streambuf* sink_;
  bool held_c2_ = false;  // 0xC2 seen: the next byte decides whether it is C1
};

// Installs filters on std::cout and std::cerr for its lifetime.
class SafeStandardStreams {
 public:
  SafeStandardStreams();
  ~SafeStandardStreams();
  SafeStandardStreams(const SafeStandardStreams&) = delete;
  SafeStandardStreams& operator=(const SafeStandardStreams&) = delete;

 private:
  SafeOutputBuffer out_, err_;
};

}  // namespace weft::tool
