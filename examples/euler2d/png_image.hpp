// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Writes a scalar field as a colour PNG (libpng) with a colour bar under it:
// the image a person looks at after a run. Row 0 of the image is the field's
// top row (largest y). Under the field, a strip (legend_layout) holds the
// colour map from scale.low (left) to scale.high (right), both values
// written under its ends (bitmap_font.hpp) and a title between them:
//
//   write_png("d.png", nx, ny, [&](std::size_t i, std::size_t j) { return rho(i, j); },
//             {0.1, 8.0, true}, "density (log)");
//   // legend_layout(nx, ny) gives the image's size: the field at the top
//   // left, widened when the labels need it, the legend's rows under it
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace weft::euler {

enum class ColourMap {
  ramp,  // dark blue, blue, teal, yellow-green, yellow, near white: larger reads brighter
  grey,  // black to white (schlieren images)
};

struct ColourScale {
  double low = 0.0, high = 1.0;  // values mapped to the two ends of the colour map
  bool logarithmic = false;      // map log(value) (needs low > 0)
  ColourMap map = ColourMap::ramp;
};

// The colour of t in [0, 1] (clamped; not finite: 0) on `map`.
std::array<std::uint8_t, 3> colour_of(double t, ColourMap map);

// A value as a colour bar label: three significant digits, e.g. "0.125", "8", "1.5e+03".
std::string scale_label(double value);

// Where the legend lies in an image of a field of width x height cells (one
// pixel a cell). Rows and columns are image pixels; `pixel` is the size of a
// font pixel (wider images write larger text).
struct LegendLayout {
  std::size_t image_width, image_height;
  std::size_t pixel;
  std::size_t margin;             // columns left and right of the bar
  std::size_t bar_top, bar_rows;  // the colour bar
  std::size_t text_top;           // the labels' top row (kGlyphHeight * pixel rows)
};
LegendLayout legend_layout(std::size_t width, std::size_t height);

// Throws std::runtime_error naming the file when it cannot be written.
void write_png(const std::string& path, std::size_t width, std::size_t height,
               const std::function<double(std::size_t x, std::size_t y)>& value, ColourScale scale,
               std::string_view title);

}  // namespace weft::euler
