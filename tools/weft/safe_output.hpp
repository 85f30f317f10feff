// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What the program prints is text a terminal shows as text, whatever the
// input held: a stream buffer in front of stdout and stderr that passes
// newlines and tabs and writes every other control character (C0, DEL, and
// the UTF-8 encoded C1 range U+0080..U+009F, which some terminals obey) as
// its JSON escape, "\u001b". So are the characters that reorder the text
// around them (bidirectional controls U+061C, U+200E, U+200F, U+202A..U+202E,
// U+2066..U+2069, and the separators U+2028, U+2029): a name holding U+202E
// would otherwise print reversed, and could pass "exe.png" off as "gnp.exe".
// JSON output stays valid: such characters can only occur inside its
// strings, where that escape means the same character.
#pragma once

#include <streambuf>

namespace weft::tool {

class SafeOutputBuffer : public std::streambuf {
 public:
  explicit SafeOutputBuffer(std::streambuf* sink) : sink_(sink) {}
  ~SafeOutputBuffer() override { finish(); }
  SafeOutputBuffer(const SafeOutputBuffer&) = delete;
  SafeOutputBuffer& operator=(const SafeOutputBuffer&) = delete;

  // Writes out the bytes held back at the end (the start of a sequence that
  // might have been escaped) and flushes.
  void finish();
  std::streambuf* sink() const noexcept { return sink_; }

 protected:
  int_type overflow(int_type ch) override;
  std::streamsize xsputn(const char* text, std::streamsize count) override;
  int sync() override { return sink_->pubsync(); }

 private:
  bool put(unsigned char c);
  bool put_raw(unsigned char c);
  bool put_escape(unsigned code_point);
  bool release_held();

  std::streambuf* sink_;
  // The start of a UTF-8 sequence that may be one to escape: the next bytes decide.
  unsigned char held_[2] = {0, 0};
  int held_count_ = 0;
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
