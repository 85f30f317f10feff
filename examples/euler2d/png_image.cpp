// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "png_image.hpp"

#include "../output_file.hpp"

#include <png.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bitmap_font.hpp"

namespace weft::euler {

namespace {

// A perceptually ordered ramp (dark blue, blue, teal, yellow-green, yellow,
// near white): larger values read brighter.
constexpr std::array<std::array<double, 3>, 6> kRamp{{
    {0.05, 0.03, 0.20},
    {0.15, 0.25, 0.65},
    {0.10, 0.55, 0.60},
    {0.55, 0.80, 0.30},
    {0.98, 0.85, 0.15},
    {1.00, 0.98, 0.90},
}};

using Rgb = std::array<std::uint8_t, 3>;
constexpr Rgb kBackground{32, 32, 32};  // apart from both ends of either colour map
constexpr Rgb kInk{255, 255, 255};

// "-1.23e-100" is the longest scale_label: each end of the bar has room for it.
constexpr std::size_t kLabelGlyphs = 10;

struct FileCloser {
  void operator()(std::FILE* f) const noexcept { std::fclose(f); }
};

// An RGB image in memory, row 0 at the top.
class Canvas {
 public:
  Canvas(std::size_t width, std::size_t height)
      : width_(width), height_(height), pixels_(width * height * 3, 0) {
    fill(0, 0, width, height, kBackground);
  }
  void set(std::size_t x, std::size_t y, const Rgb& rgb) {
    std::copy(rgb.begin(), rgb.end(), pixels_.begin() + static_cast<std::ptrdiff_t>(3 * (y * width_ + x)));
  }
  void fill(std::size_t x, std::size_t y, std::size_t w, std::size_t h, const Rgb& rgb) {
    for (std::size_t r = y; r < std::min(y + h, height_); ++r)
      for (std::size_t c = x; c < std::min(x + w, width_); ++c) set(c, r, rgb);
  }
  // `text` with its top left corner at (x, y), each font pixel `pixel` image pixels wide.
  void text(std::size_t x, std::size_t y, std::string_view text, std::size_t pixel) {
    for (std::size_t k = 0; k < text.size(); ++k) {
      const Glyph& g = glyph(text[k]);
      for (std::size_t row = 0; row < kGlyphHeight; ++row)
        for (std::size_t col = 0; col < kGlyphWidth; ++col)
          if ((g[row] & (0x10u >> col)) != 0)
            fill(x + (k * kGlyphAdvance + col) * pixel, y + row * pixel, pixel, pixel, kInk);
    }
  }
  std::size_t width() const noexcept { return width_; }
  std::size_t height() const noexcept { return height_; }
  png_byte* row(std::size_t y) noexcept { return &pixels_[y * width_ * 3]; }

 private:
  std::size_t width_, height_;
  std::vector<png_byte> pixels_;
};

void draw_legend(Canvas& canvas, const LegendLayout& l, const ColourScale& scale, std::string_view title) {
  const std::size_t bar_width = l.image_width - 2 * l.margin;
  for (std::size_t x = 0; x < bar_width; ++x) {
    const double t = bar_width > 1 ? static_cast<double>(x) / static_cast<double>(bar_width - 1) : 0.0;
    canvas.fill(l.margin + x, l.bar_top, 1, l.bar_rows, colour_of(t, scale.map));
  }
  const std::string low = scale_label(scale.low), high = scale_label(scale.high);
  const std::size_t low_width = text_width(low) * l.pixel, high_width = text_width(high) * l.pixel;
  canvas.text(l.margin, l.text_top, low, l.pixel);
  canvas.text(l.image_width - l.margin - high_width, l.text_top, high, l.pixel);
  // The title between them, centred, where it leaves a glyph's gap on each side.
  const std::size_t gap = kGlyphAdvance * l.pixel, title_width = text_width(title) * l.pixel;
  const std::size_t left = l.margin + low_width + gap, right = l.image_width - l.margin - high_width - gap;
  if (!title.empty() && right > left && right - left >= title_width)
    canvas.text(std::clamp((l.image_width - title_width) / 2, left, right - title_width), l.text_top, title,
                l.pixel);
}

// libpng reports errors by longjmp: this frame holds nothing with a
// destructor between setjmp and the writes.
void encode(const std::string& path, std::FILE* file, png_bytep* rows, png_uint_32 width,
            png_uint_32 height) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png != nullptr ? png_create_info_struct(png) : nullptr;
  if (png == nullptr || info == nullptr) {
    png_destroy_write_struct(&png, &info);
    throw std::runtime_error("cannot write '" + path + "': libpng could not start");
  }
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    throw std::runtime_error("cannot write '" + path + "': libpng failed");
  }
  png_init_io(png, file);
  png_set_IHDR(png, info, width, height, 8, PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  png_write_image(png, rows);
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
}

void save(const std::string& path, Canvas& canvas) {
  std::vector<png_bytep> rows(canvas.height());
  for (std::size_t y = 0; y < canvas.height(); ++y) rows[y] = canvas.row(y);
  // Replaced whole (weft::examples::ReplacingFile): an interrupted write
  // leaves the previous image.
  weft::examples::ReplacingFile replacing(path);
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(replacing.write_path().c_str(), "wb"));
  if (!file) throw std::runtime_error("cannot write '" + path + "': " + std::strerror(errno));
  encode(path, file.get(), rows.data(), static_cast<png_uint_32>(canvas.width()),
         static_cast<png_uint_32>(canvas.height()));
  // The last bytes reach the file only now: a full disk shows here.
  errno = 0;
  if (std::fclose(file.release()) != 0) {
    throw std::runtime_error("error while writing '" + path + "'" +
                             (errno != 0 ? std::string(": ") + std::strerror(errno) : std::string()));
  }
  replacing.commit();
}

}  // namespace

std::array<std::uint8_t, 3> colour_of(double t, ColourMap map) {
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0);
  if (map == ColourMap::grey) {
    const auto v = static_cast<std::uint8_t>(std::lround(255.0 * t));
    return {v, v, v};
  }
  t *= static_cast<double>(kRamp.size() - 1);
  const auto k = std::min(static_cast<std::size_t>(t), kRamp.size() - 2);
  const double f = t - static_cast<double>(k);
  Rgb rgb{};
  for (std::size_t c = 0; c < 3; ++c) {
    const double v = kRamp[k][c] + f * (kRamp[k + 1][c] - kRamp[k][c]);
    rgb[c] = static_cast<std::uint8_t>(std::lround(255.0 * v));
  }
  return rgb;
}

std::string scale_label(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  return text;
}

LegendLayout legend_layout(std::size_t width, std::size_t height) {
  LegendLayout l{};
  l.pixel = std::min<std::size_t>(1 + width / 600, 4);  // 800 cells wide: text 14 pixels high
  l.margin = 2 * l.pixel;
  const std::size_t labels = 2 * l.margin + 2 * kLabelGlyphs * kGlyphAdvance * l.pixel;
  l.image_width = std::max(width, labels);
  l.bar_top = height + 2 * l.pixel;
  l.bar_rows = 6 * l.pixel;
  l.text_top = l.bar_top + l.bar_rows + 2 * l.pixel;
  l.image_height = l.text_top + kGlyphHeight * l.pixel + 2 * l.pixel;
  return l;
}

void write_png(const std::string& path, std::size_t width, std::size_t height,
               const std::function<double(std::size_t, std::size_t)>& value, ColourScale scale,
               std::string_view title) {
  // A range that is empty, not finite or (on a log scale) not positive
  // draws every cell in the map's first colour rather than failing.
  const bool logarithmic = scale.logarithmic && scale.low > 0.0;
  const double low = logarithmic ? std::log(scale.low) : scale.low;
  const double span = (logarithmic ? std::log(scale.high) : scale.high) - low;
  const auto map = [&](double v) {
    if (!(span > 0.0) || !std::isfinite(span)) return 0.0;
    return ((logarithmic ? std::log(std::max(v, 1e-300)) : v) - low) / span;
  };
  // libpng's own limit on a side, checked before the canvas's size can wrap.
  const LegendLayout layout = legend_layout(width, height);
  if (width == 0 || height == 0 || layout.image_width > PNG_USER_WIDTH_MAX ||
      layout.image_height > PNG_USER_HEIGHT_MAX) {
    throw std::runtime_error("cannot write '" + path + "': an image of " + std::to_string(width) + "x" +
                             std::to_string(height) + " pixels is beyond PNG's limits");
  }
  Canvas canvas(layout.image_width, layout.image_height);
  for (std::size_t y = 0; y < height; ++y)
    for (std::size_t x = 0; x < width; ++x)
      canvas.set(x, height - 1 - y, colour_of(map(value(x, y)), scale.map));
  draw_legend(canvas, layout, scale, title);
  save(path, canvas);
}

}  // namespace weft::euler
