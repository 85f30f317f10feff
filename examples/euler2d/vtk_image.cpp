// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include "vtk_image.hpp"

#include <bit>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "../output_file.hpp"

namespace weft::euler {

namespace {

using weft::examples::OutputError;

constexpr const char* kByteOrder = std::endian::native == std::endian::little ? "LittleEndian" : "BigEndian";

// Base64 (RFC 4648, with padding) onto a stream, three bytes at a time.
class Base64Writer {
 public:
  explicit Base64Writer(std::ostream& out) : out_(out) {}
  void put(const void* data, std::size_t size) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (std::size_t k = 0; k < size; ++k) {
      held_[count_++] = bytes[k];
      if (count_ == 3) emit();
    }
  }
  // Pads what is held: VTK decodes the byte count and the values as two
  // separate encodings.
  void finish() {
    if (count_ > 0) emit();
  }

 private:
  void emit() {
    static constexpr char kDigits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned value = (unsigned{held_[0]} << 16) | (count_ > 1 ? unsigned{held_[1]} << 8 : 0u) |
                           (count_ > 2 ? unsigned{held_[2]} : 0u);
    const char quad[4] = {kDigits[(value >> 18) & 63], kDigits[(value >> 12) & 63],
                          count_ > 1 ? kDigits[(value >> 6) & 63] : '=',
                          count_ > 2 ? kDigits[value & 63] : '='};
    out_.write(quad, 4);
    count_ = 0;
  }

  std::ostream& out_;
  unsigned char held_[3] = {};
  std::size_t count_ = 0;
};

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", value);
  return text;
}

// "x0 x1 y0 y1 z0 z1" in points: cells [first, last) span points first..last.
std::string extent(const VtkGrid& grid, RowRange rows) {
  return "0 " + std::to_string(grid.nx) + " " + std::to_string(rows.first) + " " + std::to_string(rows.last) +
         " 0 0";
}

std::string geometry(const VtkGrid& grid) {
  const std::string h = number(grid.spacing);
  return "Origin=\"0 0 0\" Spacing=\"" + h + " " + h + " " + h + "\"";
}

void data_array(std::ostream& out, const char* name, int components, const std::vector<double>& values) {
  out << "        <DataArray type=\"Float64\" Name=\"" << name << "\"";
  if (components > 1) out << " NumberOfComponents=\"" << components << "\"";
  out << " format=\"binary\">\n          ";
  Base64Writer base64(out);
  const std::uint64_t bytes = values.size() * sizeof(double);
  base64.put(&bytes, sizeof bytes);
  base64.finish();
  base64.put(values.data(), bytes);
  base64.finish();
  out << "\n        </DataArray>\n";
}

// Opens `path`, lets `write` fill it and checks the stream through close.
// The file is replaced whole (weft::examples::ReplacingFile): an interrupted
// write leaves the previous one.
template <class Write>
void write_checked(const std::string& path, Write&& write) {
  weft::examples::ReplacingFile replacing(path);
  errno = 0;
  std::ofstream out(replacing.write_path(), std::ios::binary | std::ios::trunc);
  if (!out) throw OutputError(weft::examples::detail::output_failure("cannot open", path, errno));
  write(out);
  out.close();
  if (out.fail())
    throw OutputError(weft::examples::detail::output_failure("error while writing", path, errno));
  replacing.commit();
}

// A file name as an XML attribute value.
std::string escaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

const char* kHeader = "<?xml version=\"1.0\"?>\n<VTKFile type=\"";

}  // namespace

std::string vtk_piece_name(const std::string& path, int rank) {
  return path.substr(0, path.size() - 4) + "_rank" + std::to_string(rank) + ".vti";
}

std::string pvti_name(const std::string& path) { return path.substr(0, path.size() - 4) + ".pvti"; }

void write_vti(const std::string& path, const VtkGrid& grid, RowRange rows, const VtkArrays& arrays) {
  const std::size_t cells = (rows.last - rows.first) * grid.nx;
  if (arrays.density.size() != cells || arrays.pressure.size() != cells ||
      arrays.velocity.size() != 3 * cells)
    throw std::invalid_argument("write_vti: the arrays do not hold " + std::to_string(cells) + " cells");
  write_checked(path, [&](std::ostream& out) {
    // A piece's whole extent is its own, so that it also opens alone, in place.
    out << kHeader << "ImageData\" version=\"1.0\" byte_order=\"" << kByteOrder
        << "\" header_type=\"UInt64\">\n"
        << "  <ImageData WholeExtent=\"" << extent(grid, rows) << "\" " << geometry(grid) << ">\n"
        << "    <FieldData>\n"
        << "      <DataArray type=\"Float64\" Name=\"TimeValue\" NumberOfTuples=\"1\" format=\"ascii\">"
        << number(grid.time) << "</DataArray>\n"
        << "    </FieldData>\n"
        << "    <Piece Extent=\"" << extent(grid, rows) << "\">\n"
        << "      <CellData Scalars=\"density\" Vectors=\"velocity\">\n";
    data_array(out, "density", 1, arrays.density);
    data_array(out, "pressure", 1, arrays.pressure);
    data_array(out, "velocity", 3, arrays.velocity);
    out << "      </CellData>\n    </Piece>\n  </ImageData>\n</VTKFile>\n";
  });
}

void write_pvti(const std::string& path, const VtkGrid& grid, const std::vector<VtkPiece>& pieces) {
  write_checked(path, [&](std::ostream& out) {
    out << kHeader << "PImageData\" version=\"1.0\" byte_order=\"" << kByteOrder
        << "\" header_type=\"UInt64\">\n"
        << "  <PImageData WholeExtent=\"" << extent(grid, {0, grid.ny}) << "\" GhostLevel=\"0\" "
        << geometry(grid) << ">\n"
        << "    <PCellData Scalars=\"density\" Vectors=\"velocity\">\n"
        << "      <PDataArray type=\"Float64\" Name=\"density\"/>\n"
        << "      <PDataArray type=\"Float64\" Name=\"pressure\"/>\n"
        << "      <PDataArray type=\"Float64\" Name=\"velocity\" NumberOfComponents=\"3\"/>\n"
        << "    </PCellData>\n";
    for (const VtkPiece& piece : pieces)
      out << "    <Piece Extent=\"" << extent(grid, piece.rows) << "\" Source=\"" << escaped(piece.file)
          << "\"/>\n";
    out << "  </PImageData>\n</VTKFile>\n";
  });
}

}  // namespace weft::euler
