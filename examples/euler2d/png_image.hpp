// Writes a scalar field as a colour PNG (libpng): the image a person looks at
// after a run. Row 0 of the image is the field's top row (largest y).
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace weft::euler {

struct ColourScale {
  double low = 0.0, high = 1.0;  // values mapped to the two ends of the colour ramp
  bool logarithmic = false;      // map log(value) (values must be > 0)
};

// Throws std::runtime_error naming the file when it cannot be written.
void write_png(const std::string& path, std::size_t width, std::size_t height,
               const std::function<double(std::size_t x, std::size_t y)>& value, ColourScale scale);

}  // namespace weft::euler
