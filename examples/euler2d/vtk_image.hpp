// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// euler2d's raw output for analysis tools (--vtk): VTK XML image data, which
// ParaView and VisIt read. Cell arrays density, pressure and velocity (three
// components, z = 0) on nx x ny square cells of side `spacing`, origin 0,
// and the run's time as TimeValue. Over MPI ranks every rank writes the rows
// of the blocks it owns as its own file, and rank 0 a .pvti that places them:
//
//   const VtkGrid grid{nx, ny, h, time};
//   write_vti("run.vti", grid, {0, ny}, vtk_arrays(field, grid, {0, ny}, 1.4));   // one process
//   write_vti(vtk_piece_name("run.vti", r), grid, rows, vtk_arrays(...));         // rank r: run_rank<r>.vti
//   write_pvti("run.pvti", grid, vtk_pieces(field, ranks, "run.vti"));            // rank 0
//
// Arrays are base64 "binary": the doubles exactly as computed, 2.3 times
// smaller than the 17 digits ASCII needs for that, and still a text file that
// any XML parser takes. Each array is a UInt64 byte count and the values,
// each base64-encoded on its own, which VTK's readers take (file version 1.0).
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace weft::euler {

struct VtkGrid {
  std::size_t nx = 0, ny = 0;  // cells
  double spacing = 1.0;        // a cell's side
  double time = 0.0;
};

struct RowRange {
  std::size_t first = 0, last = 0;  // cell rows [first, last)
};

// The three arrays of rows [first, last) of a grid, row-major, i fastest.
struct VtkArrays {
  std::vector<double> density, pressure, velocity;  // velocity: (u, v, 0) per cell
};

struct VtkPiece {
  RowRange rows;
  std::string file;  // relative to the .pvti's folder
};

// "out/run.vti" on rank 2: "out/run_rank2.vti". `path` ends in ".vti".
std::string vtk_piece_name(const std::string& path, int rank);
// "out/run.vti": "out/run.pvti".
std::string pvti_name(const std::string& path);

// Throws weft::examples::OutputError naming the file when it cannot be written.
void write_vti(const std::string& path, const VtkGrid& grid, RowRange rows, const VtkArrays& arrays);
void write_pvti(const std::string& path, const VtkGrid& grid, const std::vector<VtkPiece>& pieces);

template <class Field>
VtkArrays vtk_arrays(const Field& field, const VtkGrid& grid, RowRange rows, double gamma) {
  VtkArrays a;
  const std::size_t cells = (rows.last - rows.first) * grid.nx;
  a.density.reserve(cells);
  a.pressure.reserve(cells);
  a.velocity.reserve(3 * cells);
  for (std::size_t j = rows.first; j < rows.last; ++j) {
    for (std::size_t i = 0; i < grid.nx; ++i) {
      const auto cell = field(i, j);
      a.density.push_back(cell.density());
      a.pressure.push_back(cell.pressure(gamma));
      a.velocity.insert(a.velocity.end(), {cell.velocity(0), cell.velocity(1), 0.0});
    }
  }
  return a;
}

// The rows of the blocks `rank` owns (nullopt: none). The domain is split
// along y and ranks own contiguous runs of partitions (weft::block_owners),
// so they are one range; a tensor whose owners interleave throws.
template <class Tensor>
std::optional<RowRange> rows_of_rank(const Tensor& field, int rank) {
  std::optional<RowRange> rows;
  std::size_t owned = 0;
  for (std::size_t b = 0; b < field.block_count(); ++b) {
    if (field.owner_of(b) != rank) continue;
    const auto origin = field.geometry().block_origin(b), extent = field.geometry().block_extent(b);
    if (!rows) rows = RowRange{origin[1], origin[1]};
    rows->first = std::min(rows->first, origin[1]);
    rows->last = std::max(rows->last, origin[1] + extent[1]);
    owned += extent[1];
  }
  if (rows && rows->last - rows->first != owned) {
    throw std::logic_error("--vtk: rank " + std::to_string(rank) +
                           "'s blocks are not one run of rows; a piece file needs them to be");
  }
  return rows;
}

// One piece a rank that owns blocks of `field`, named vtk_piece_name(path, rank).
template <class Tensor>
std::vector<VtkPiece> vtk_pieces(const Tensor& field, int ranks, const std::string& path) {
  std::vector<VtkPiece> pieces;
  const std::size_t slash = path.find_last_of('/');
  for (int r = 0; r < ranks; ++r) {
    if (const std::optional<RowRange> rows = rows_of_rank(field, r)) {
      const std::string name = vtk_piece_name(path, r);
      pieces.push_back({*rows, slash == std::string::npos ? name : name.substr(slash + 1)});
    }
  }
  return pieces;
}

}  // namespace weft::euler
