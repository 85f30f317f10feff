#include "png_image.hpp"

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

namespace weft::euler {

namespace {

// A perceptually ordered ramp (dark blue, blue, teal, yellow-green, yellow,
// near white): denser gas reads brighter.
constexpr std::array<std::array<double, 3>, 6> kRamp{{
    {0.05, 0.03, 0.20},
    {0.15, 0.25, 0.65},
    {0.10, 0.55, 0.60},
    {0.55, 0.80, 0.30},
    {0.98, 0.85, 0.15},
    {1.00, 0.98, 0.90},
}};

std::array<png_byte, 3> colour(double t) {
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0) * static_cast<double>(kRamp.size() - 1);
  const auto k = std::min(static_cast<std::size_t>(t), kRamp.size() - 2);
  const double f = t - static_cast<double>(k);
  std::array<png_byte, 3> rgb{};
  for (std::size_t c = 0; c < 3; ++c) {
    const double v = kRamp[k][c] + f * (kRamp[k + 1][c] - kRamp[k][c]);
    rgb[c] = static_cast<png_byte>(std::lround(255.0 * v));
  }
  return rgb;
}

struct FileCloser {
  void operator()(std::FILE* f) const noexcept { std::fclose(f); }
};

}  // namespace

void write_png(const std::string& path, std::size_t width, std::size_t height,
               const std::function<double(std::size_t, std::size_t)>& value, ColourScale scale) {
  const auto map = [&](double v) {
    if (scale.logarithmic) {
      return (std::log(std::max(v, 1e-300)) - std::log(scale.low)) /
             (std::log(scale.high) - std::log(scale.low));
    }
    return (v - scale.low) / (scale.high - scale.low);
  };
  // libpng's own limit on a side, checked before width * height * 3 can wrap.
  if (width == 0 || height == 0 || width > PNG_USER_WIDTH_MAX || height > PNG_USER_HEIGHT_MAX) {
    throw std::runtime_error("cannot write '" + path + "': an image of " + std::to_string(width) + "x" +
                             std::to_string(height) + " pixels is beyond PNG's limits");
  }
  std::vector<png_byte> pixels(width * height * 3);
  for (std::size_t y = 0; y < height; ++y) {
    png_byte* row = &pixels[(height - 1 - y) * width * 3];
    for (std::size_t x = 0; x < width; ++x) {
      const std::array<png_byte, 3> rgb = colour(map(value(x, y)));
      std::copy(rgb.begin(), rgb.end(), row + 3 * x);
    }
  }

  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "wb"));
  if (!file) throw std::runtime_error("cannot write '" + path + "': " + std::strerror(errno));
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
  png_infop info = png != nullptr ? png_create_info_struct(png) : nullptr;
  if (png == nullptr || info == nullptr) {
    png_destroy_write_struct(&png, &info);
    throw std::runtime_error("cannot write '" + path + "': libpng could not start");
  }
  // libpng reports errors by longjmp: keep this frame free of objects with
  // destructors between setjmp and the writes.
  std::vector<png_bytep> rows(height);
  for (std::size_t y = 0; y < height; ++y) rows[y] = &pixels[y * width * 3];
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    throw std::runtime_error("cannot write '" + path + "': libpng failed");
  }
  png_init_io(png, file.get());
  png_set_IHDR(png, info, static_cast<png_uint_32>(width), static_cast<png_uint_32>(height), 8,
               PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  png_write_image(png, rows.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  // The last bytes reach the file only now: a full disk shows here.
  errno = 0;
  if (std::fclose(file.release()) != 0) {
    throw std::runtime_error("error while writing '" + path + "'" +
                             (errno != 0 ? std::string(": ") + std::strerror(errno) : std::string()));
  }
}

}  // namespace weft::euler
