// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Eikonal example on GPUs (examples/eikonal/gpu_solver.cuh): the field
// equals the serial reference bit for bit in both precisions and layouts,
// with and without shared-memory staging and skipping, on one GPU and over
// two logical devices. Skips, saying so, without a GPU.
#include <weft/views/cuda/block_kernel_cuda.cuh>
#include <weft/weft.hpp>

#include <doctest/doctest.h>

#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "../cuda/gpu_test_support.cuh"
#include "gpu_solver.cuh"
#include "reference.hpp"

namespace {

using weft::eikonal::Problem;

template <class T, class Layout>
void check_equals_reference(const Problem& p) {
  weft::eikonal::GpuSolver<T, Layout> solver(p);
  weft::Executor executor;
  const long passes = solver.run(executor);
  solver.sync_host();
  const auto reference = weft::eikonal::solve_serial<T>(p);
  CHECK(passes == reference.changing_passes);
  using Bits = std::conditional_t<sizeof(T) == 8, std::uint64_t, std::uint32_t>;
  std::size_t different = 0;
  for (std::size_t j = 0; j < p.ny; ++j)
    for (std::size_t i = 0; i < p.nx; ++i)
      different +=
          std::bit_cast<Bits>(solver.distance(i, j)) != std::bit_cast<Bits>(reference.values[j * p.nx + i]);
  CHECK(different == 0);
  // Again after a reset: the same passes and field.
  solver.reset();
  CHECK(solver.run(executor) == passes);
}

Problem problem(std::size_t partitions, int gpus) {
  Problem p;
  p.nx = 130;  // not a multiple of the shared-memory tile (32 x 8)
  p.ny = 84;
  p.band = 25;
  p.source_x = 40;
  p.source_y = 50;
  p.partitions = partitions;
  p.tiles_x = 3;
  p.tiles_y = 2;
  p.gpus = gpus;
  return p;
}

template <class T, class Layout>
void check_all_modes(Problem p) {
  for (const bool in_shared : {false, true}) {
    for (const bool skip : {false, true}) {
      CAPTURE(in_shared);
      CAPTURE(skip);
      p.in_shared = in_shared;
      p.skip_quiet_blocks = skip;
      check_equals_reference<T, Layout>(p);
    }
  }
}

}  // namespace

TEST_CASE("Eikonal.gpu.equals_the_serial_reference_bitwise.1gpu") {
  if (!weft::test::gpu_present()) return;
  const Problem p = problem(1, 1);
  check_all_modes<float, weft::StridedView>(p);
  check_all_modes<float, weft::ContiguousView>(p);
  check_all_modes<double, weft::StridedView>(p);
  check_all_modes<double, weft::ContiguousView>(p);
}

TEST_CASE("Eikonal.gpu.equals_the_serial_reference_bitwise.2logical_devices") {
  if (!weft::test::gpu_present()) return;
  const weft::test::LogicalDevices two(2);
  check_all_modes<double, weft::StridedView>(problem(2, 2));
  check_all_modes<float, weft::ContiguousView>(problem(2, 2));
}
