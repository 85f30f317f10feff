// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Ripple's layout benchmarks on the GPU (section 7.2 and 7.3, Tables 3 and
// 4): weft's polymorphic-layout types used in device code, StridedView
// (struct of arrays) against ContiguousView (array of structs), each against
// a hand-written CUDA kernel over plain arrays. One stream of device 0, GPU
// time between CUDA events, the fastest of opt.repetitions timings.
//
//   cuda_particle_update   x += v dt for 3D float particles (a Particle of two
//                          Vector<float, 3>, as in views_particle_update),
//                          n = 1M, 10M, 100M (--quick: 1M), in us per update:
//                          .strided against a SoA kernel, .contiguous against
//                          an AoS kernel, .layouts strided against contiguous
//                          (issue 7's goal: below 1), and .bandwidth, 36 bytes a
//                          particle (read x and v, write x) against a
//                          device-to-device copy of the 24n-byte particle array,
//                          in GB/s read + written (higher is better there).
//   cuda_flux_difference   one step of the 2D Euler equations with FORCE fluxes
//                          on all four faces of every cell (the physics of
//                          examples/euler2d/euler_physics.hpp), N x N cells plus
//                          one cell of padding, N = 1024, 2048, 4096 (--quick:
//                          512), in us per step: .strided and .contiguous
//                          against a hand-written SoA kernel, .layouts, .cells
//                          in Gcells/s, and .bandwidth, 32 bytes a cell (read and
//                          write a state once) against a device-to-device copy
//                          of the 16 (N+2)^2-byte state array.
//
// The weft kernels are weft::cuda::parallel_for over WEFT_HOST_DEVICE
// functors that reach every element through element_storage<T>::at, the
// handle a Tensor block gives a kernel. The hand kernels are plain <<<>>>
// launches, 256 threads a block as weft's, one thread an element, with
// __restrict__ pointers (what a careful hand writes; it lets the compiler use
// the read-only data path, which a layout handle cannot promise).
//
// Verification, before the timings: each contender's outputs are poisoned
// (all bytes 0xFF, a NaN), its inputs written, one update or step run, and
// the result copied back and compared with a host computation; a mismatch
// names the first bad element and exits 1.
// - Particles: bitwise. dt is 2^-7 and every velocity a multiple of 1/8, so
//   v dt is exact and x + v dt too (|x| < 2^13 on a 2^-10 grid): the result
//   does not depend on whether a compiler fuses the multiply-add.
// - Flux difference: within 8 float epsilons of the largest conserved value
//   of the grid (the energy, about 2.8). The host benchmark allows 4 epsilons
//   of each variable's own largest value, since there both sides are built by
//   the same compiler and in practice agree bitwise; here nvcc fuses
//   multiply-adds (its default) and g++ does not, which moves a result by
//   roundings of the fluxes that enter it, and those are as large as the
//   energy, not as small as the momenta. Measured on the host at 1024^2
//   (g++ with and without -mfma -ffp-contract=fast): the largest difference is
//   1.4 epsilons of the energy scale, which is 4.3 epsilons of the y momentum's
//   own scale, past the host benchmark's tolerance. A wrong neighbour or
//   component is off by about the step's own change, whose largest values
//   at 4096^2 are 2e-5 (y momentum) to 1e-4 (energy), 8 to 45 times the
//   tolerance (2.7e-6), and more at smaller N. A note on stderr counts the
//   values that are not bitwise equal.
#include "bench.hpp"
#include "cuda_timing.cuh"
#include "particle.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime.h>

#include "euler_physics.hpp"

#include <weft/backends/cuda_streams.hpp>
#include <weft/backends/host_device.hpp>
#include <weft/backends/memory_space.hpp>
#include <weft/views/cuda/parallel_for_cuda.cuh>
#include <weft/views/element_array.hpp>
#include <weft/views/element_storage.hpp>
#include <weft/views/polymorphic_layout.hpp>
#include <weft/views/range_policy.hpp>
#include <weft/views/read_only.hpp>
#include <weft/views/storage_descriptor.hpp>
#include <weft/views/vector.hpp>

namespace {

using weft::bench::Options;
using weft::bench::Reporter;
using weft::bench::gpu::best_ms_per_operation;
using weft::bench::gpu::check;
using weft::bench::gpu::device_memory_for;
using weft::bench::gpu::gpu_present;
using weft::bench::gpu::kDevice;
using DeviceBuffer = weft::SpaceBuffer<weft::CudaSpace>;

constexpr unsigned kThreadsPerBlock = 256;  // as weft::cuda::parallel_for's blocks
constexpr unsigned char kPoison = 0xFF;     // every float a NaN
constexpr double kMicro = 1e3;              // milliseconds to microseconds

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "cuda_layout: %s\n", message.c_str());
  std::exit(1);
}

void poison(void* device, std::size_t bytes, cudaStream_t stream) {
  check(cudaMemsetAsync(device, kPoison, bytes, stream), "cudaMemsetAsync (poison)");
}

// Stream-ordered copies: the benchmark's streams are non-blocking, so the
// legacy-stream cudaMemcpy would not wait for their kernels.
void upload(void* device, const void* host, std::size_t bytes, cudaStream_t stream) {
  check(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream), "cudaMemcpyAsync (upload)");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (upload)");
}

void download(void* host, const void* device, std::size_t bytes, cudaStream_t stream) {
  check(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream), "cudaMemcpyAsync (download)");
  check(cudaStreamSynchronize(stream), "cudaStreamSynchronize (download)");
}

void check_launch(const char* kernel) { check(cudaGetLastError(), kernel); }

unsigned blocks_for(std::int64_t threads) {
  return static_cast<unsigned>((threads + kThreadsPerBlock - 1) / kThreadsPerBlock);
}

std::string millions(std::int64_t n) { return std::to_string(n / 1'000'000) + "M"; }

// ---- cuda_particle_update ---------------------------------------------------------------

using weft::bench::Particle;  // particle.hpp

template <class Layout>
using ParticleStorage = weft::element_storage<Particle<Layout>>;

// The hand-written AoS kernel's element.
struct PlainParticle {
  float position[3];
  float velocity[3];
};

// 2^-7: see the verification notes at the top.
constexpr float kParticleDt = 0.0078125f;

// Integers below 1026 and multiples of 1/8 in [-0.75, 0.75]: exact in float.
WEFT_HOST_DEVICE inline float initial_position(std::int64_t i, std::int64_t d) {
  return static_cast<float>(i % 1024 + d);
}
WEFT_HOST_DEVICE inline float initial_velocity(std::int64_t i, std::int64_t d) {
  return static_cast<float>((i * 7 + d) % 13) * 0.125f - 0.75f;
}

template <class Layout>
struct InitParticles {
  void* particles;
  std::size_t count;
  WEFT_HOST_DEVICE void operator()(std::int64_t i) const {
    auto p = ParticleStorage<Layout>::at(particles, static_cast<std::size_t>(i), count);
    for (std::size_t d = 0; d < 3; ++d) {
      p.position(d) = initial_position(i, static_cast<std::int64_t>(d));
      p.velocity(d) = initial_velocity(i, static_cast<std::int64_t>(d));
    }
  }
};

template <class Layout>
struct UpdateParticles {
  void* particles;
  std::size_t count;
  float dt;
  WEFT_HOST_DEVICE void operator()(std::int64_t i) const {
    ParticleStorage<Layout>::at(particles, static_cast<std::size_t>(i), count).update(dt);
  }
};

// x, y, z, then vx, vy, vz, `count` floats each.
struct InitSoaParticles {
  float* values;
  std::int64_t count;
  WEFT_HOST_DEVICE void operator()(std::int64_t i) const {
    for (std::int64_t d = 0; d < 3; ++d) {
      values[d * count + i] = initial_position(i, d);
      values[(3 + d) * count + i] = initial_velocity(i, d);
    }
  }
};

struct InitAosParticles {
  PlainParticle* particles;
  WEFT_HOST_DEVICE void operator()(std::int64_t i) const {
    for (std::int64_t d = 0; d < 3; ++d) {
      particles[i].position[d] = initial_position(i, d);
      particles[i].velocity[d] = initial_velocity(i, d);
    }
  }
};

__global__ void __launch_bounds__(kThreadsPerBlock)
    hand_soa_update(float* __restrict__ x, float* __restrict__ y, float* __restrict__ z,
                    const float* __restrict__ vx, const float* __restrict__ vy, const float* __restrict__ vz,
                    std::int64_t count, float dt) {
  const std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < count) {
    x[i] += vx[i] * dt;
    y[i] += vy[i] * dt;
    z[i] += vz[i] * dt;
  }
}

__global__ void __launch_bounds__(kThreadsPerBlock)
    hand_aos_update(PlainParticle* __restrict__ particles, std::int64_t count, float dt) {
  const std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (i < count) {
    for (int d = 0; d < 3; ++d) particles[i].position[d] += particles[i].velocity[d] * dt;
  }
}

template <class T>
void check_bitwise(const char* what, const char* component, std::int64_t i, std::int64_t d, T got,
                   T expected) {
  if (std::memcmp(&got, &expected, sizeof(T)) != 0) {
    fail(std::string(what) + ": particle " + std::to_string(i) + " " + component + "[" + std::to_string(d) +
         "] is " + std::to_string(got) + ", the host computed " + std::to_string(expected));
  }
}

// Fails unless every particle kept its initial velocity and moved by exactly
// one update. position(i, d) and velocity(i, d) read the copied-back result.
template <class Position, class Velocity>
void check_one_update(const char* what, std::int64_t count, Position position, Velocity velocity) {
  for (std::int64_t i = 0; i < count; ++i) {
    for (std::int64_t d = 0; d < 3; ++d) {
      const float v = initial_velocity(i, d);
      check_bitwise(what, "position", i, d, position(i, d), initial_position(i, d) + v * kParticleDt);
      check_bitwise(what, "velocity", i, d, velocity(i, d), v);
    }
  }
}

// The particles of one layout in device memory, weft's way.
template <class Layout>
class WeftParticles {
 public:
  using Storage = ParticleStorage<Layout>;

  WeftParticles(const weft::CudaSpace& space, std::int64_t count)
      : count_(count), buffer_(space, Storage::bytes(static_cast<std::size_t>(count))) {}

  static std::size_t bytes(std::int64_t count) { return Storage::bytes(static_cast<std::size_t>(count)); }

  void reset(cudaStream_t stream) const {
    poison(buffer_.data(), buffer_.size(), stream);
    weft::cuda::parallel_for(stream, all(), InitParticles<Layout>{buffer_.data(), size()});
  }
  void update(cudaStream_t stream) const {
    weft::cuda::parallel_for(stream, all(), UpdateParticles<Layout>{buffer_.data(), size(), kParticleDt});
  }
  void verify(const char* what, cudaStream_t stream) const {
    weft::ElementArray<Particle<Layout>> host(size());
    download(host.data(), buffer_.data(), host.bytes(), stream);
    check_one_update(
        what, count_, [&](std::int64_t i, std::int64_t d) { return host[index(i)].position(index(d)); },
        [&](std::int64_t i, std::int64_t d) { return host[index(i)].velocity(index(d)); });
  }

 private:
  static std::size_t index(std::int64_t i) { return static_cast<std::size_t>(i); }
  std::size_t size() const { return index(count_); }
  weft::RangePolicy<std::int64_t> all() const { return {0, count_}; }

  std::int64_t count_;
  DeviceBuffer buffer_;
};

class HandSoaParticles {
 public:
  HandSoaParticles(const weft::CudaSpace& space, std::int64_t count)
      : count_(count), buffer_(space, bytes(count)) {}

  static std::size_t bytes(std::int64_t count) { return 6 * static_cast<std::size_t>(count) * sizeof(float); }

  void reset(cudaStream_t stream) const {
    poison(buffer_.data(), buffer_.size(), stream);
    weft::cuda::parallel_for(stream, weft::RangePolicy<std::int64_t>(0, count_),
                             InitSoaParticles{values(), count_});
  }
  void update(cudaStream_t stream) const {
    float* v = values();
    hand_soa_update<<<blocks_for(count_), kThreadsPerBlock, 0, stream>>>(
        v, v + count_, v + 2 * count_, v + 3 * count_, v + 4 * count_, v + 5 * count_, count_, kParticleDt);
    check_launch("hand_soa_update<<<>>>");
  }
  void verify(const char* what, cudaStream_t stream) const {
    std::vector<float> host(6 * static_cast<std::size_t>(count_));
    download(host.data(), buffer_.data(), bytes(count_), stream);
    const auto at = [&](std::int64_t array, std::int64_t i) {
      return host[static_cast<std::size_t>(array * count_ + i)];
    };
    check_one_update(
        what, count_, [&](std::int64_t i, std::int64_t d) { return at(d, i); },
        [&](std::int64_t i, std::int64_t d) { return at(3 + d, i); });
  }

 private:
  float* values() const { return static_cast<float*>(buffer_.data()); }

  std::int64_t count_;
  DeviceBuffer buffer_;
};

class HandAosParticles {
 public:
  HandAosParticles(const weft::CudaSpace& space, std::int64_t count)
      : count_(count), buffer_(space, bytes(count)) {}

  static std::size_t bytes(std::int64_t count) {
    return static_cast<std::size_t>(count) * sizeof(PlainParticle);
  }

  void* data() const { return buffer_.data(); }

  void reset(cudaStream_t stream) const {
    poison(buffer_.data(), buffer_.size(), stream);
    weft::cuda::parallel_for(stream, weft::RangePolicy<std::int64_t>(0, count_),
                             InitAosParticles{particles()});
  }
  void update(cudaStream_t stream) const {
    hand_aos_update<<<blocks_for(count_), kThreadsPerBlock, 0, stream>>>(particles(), count_, kParticleDt);
    check_launch("hand_aos_update<<<>>>");
  }
  void verify(const char* what, cudaStream_t stream) const {
    std::vector<PlainParticle> host(static_cast<std::size_t>(count_));
    download(host.data(), buffer_.data(), bytes(count_), stream);
    check_one_update(
        what, count_,
        [&](std::int64_t i, std::int64_t d) { return host[static_cast<std::size_t>(i)].position[d]; },
        [&](std::int64_t i, std::int64_t d) { return host[static_cast<std::size_t>(i)].velocity[d]; });
  }

 private:
  PlainParticle* particles() const { return static_cast<PlainParticle*>(buffer_.data()); }

  std::int64_t count_;
  DeviceBuffer buffer_;
};

// One update checked against the host, then timed. Leaves the particles
// updated an unknown number of times.
template <class Particles>
double verified_us_per_update(const Particles& particles, const char* what, cudaStream_t stream,
                              int repetitions, int operations) {
  particles.reset(stream);
  particles.update(stream);
  particles.verify(what, stream);
  return kMicro * best_ms_per_operation(stream, repetitions, operations, [&] { particles.update(stream); });
}

void particle_update(const Options& opt, Reporter& out) {
  const std::vector<std::int64_t> sizes = opt.quick
                                              ? std::vector<std::int64_t>{1'000'000}
                                              : std::vector<std::int64_t>{1'000'000, 10'000'000, 100'000'000};
  weft::DeviceStreams gpu(kDevice);
  const cudaStream_t stream = gpu.compute_stream();
  const weft::CudaSpace space(kDevice);

  for (const std::int64_t n : sizes) {
    const std::string params = "n=" + millions(n);
    // At 100M: 2.4 GB each, 12 GB in all.
    const std::size_t copy_bytes = HandAosParticles::bytes(n);
    const std::size_t needed = WeftParticles<weft::StridedView>::bytes(n) +
                               WeftParticles<weft::ContiguousView>::bytes(n) + HandSoaParticles::bytes(n) +
                               HandAosParticles::bytes(n) + copy_bytes;
    if (!device_memory_for("cuda_particle_update", params.c_str(), needed)) continue;

    const WeftParticles<weft::StridedView> strided(space, n);
    const WeftParticles<weft::ContiguousView> contiguous(space, n);
    const HandSoaParticles soa(space, n);
    const HandAosParticles aos(space, n);
    const DeviceBuffer copy(space, copy_bytes);

    // Enough updates per timing that launch gaps do not count at 1M.
    const int operations = static_cast<int>(std::clamp<std::int64_t>(100'000'000 / n, 1, 100));
    const int reps = opt.repetitions;
    const double strided_us = verified_us_per_update(strided, "strided", stream, reps, operations);
    const double contiguous_us = verified_us_per_update(contiguous, "contiguous", stream, reps, operations);
    const double soa_us = verified_us_per_update(soa, "hand SoA", stream, reps, operations);
    const double aos_us = verified_us_per_update(aos, "hand AoS", stream, reps, operations);
    const double copy_us =
        kMicro * best_ms_per_operation(stream, reps, operations, [&] {
          check(cudaMemcpyAsync(copy.data(), aos.data(), copy_bytes, cudaMemcpyDeviceToDevice, stream),
                "cudaMemcpyAsync (device to device)");
        });

    const char* name = "cuda_particle_update";
    out.compare(std::string(name) + ".strided", params, "us/update", {"weft", strided_us},
                {"hand SoA", soa_us});
    out.compare(std::string(name) + ".contiguous", params, "us/update", {"weft", contiguous_us},
                {"hand AoS", aos_us});
    out.compare(std::string(name) + ".layouts", params + " goal<1", "us/update", {"strided", strided_us},
                {"contiguous", contiguous_us});
    // GB/s from us: bytes / (us * 1e3).
    const double particles = static_cast<double>(n);
    out.compare(std::string(name) + ".bandwidth", params + " higher=better", "GB/s",
                {"strided", 36.0 * particles / (strided_us * 1e3)},
                {"D2D copy", 2.0 * static_cast<double>(copy_bytes) / (copy_us * 1e3)});
  }
}

// ---- cuda_flux_difference ---------------------------------------------------------------

constexpr float kGamma = 1.4f;
constexpr float kPi = 3.14159265f;
constexpr float kDtOverDx = 0.2f;      // CFL number about 0.3 for initial_flow
constexpr std::size_t kVariables = 4;  // density, energy, momentum x, momentum y

template <class Layout>
using Cell = weft::euler::State<float, Layout>;

template <class Layout>
using CellStorage = weft::element_storage<Cell<Layout>>;

// N x N cells and one cell of padding all round, x fastest: cell (i, j) of
// the interior is element (j + 1) * pitch + i + 1, and -1 and N reach into
// the padding.
struct PaddedGrid {
  std::int64_t n;
  WEFT_HOST_DEVICE std::int64_t pitch() const { return n + 2; }
  WEFT_HOST_DEVICE std::int64_t cells() const { return pitch() * pitch(); }
  WEFT_HOST_DEVICE std::int64_t at(std::int64_t i, std::int64_t j) const { return (j + 1) * pitch() + i + 1; }
};

// A smooth flow over the unit square with |u| + c about 1.5 (the host
// benchmark's).
Cell<weft::ContiguousOwned> initial_flow(std::int64_t i, std::int64_t j, std::int64_t n) {
  const float x = (static_cast<float>(i) + 0.5f) / static_cast<float>(n);
  const float y = (static_cast<float>(j) + 0.5f) / static_cast<float>(n);
  const float sx = std::sin(2 * kPi * x), sy = std::sin(2 * kPi * y);
  return weft::euler::from_primitive(1.0f + 0.2f * sx * sy, 0.3f * std::cos(2 * kPi * y),
                                     0.2f * std::cos(2 * kPi * x), 1.0f + 0.1f * sx, kGamma);
}

// A grid's conserved variables on the host, one array each (the hand
// kernel's layout and the common form every result is compared in).
struct HostGrid {
  PaddedGrid grid;
  std::vector<float> values[kVariables];
  explicit HostGrid(PaddedGrid g) : grid(g) {
    for (auto& v : values) v.assign(static_cast<std::size_t>(g.cells()), 0.0f);
  }
  float& at(std::size_t variable, std::int64_t k) { return values[variable][static_cast<std::size_t>(k)]; }
  float at(std::size_t variable, std::int64_t k) const {
    return values[variable][static_cast<std::size_t>(k)];
  }
};

HostGrid initial_grid(PaddedGrid grid) {
  HostGrid host(grid);
  const std::int64_t n = grid.n;
  for (std::int64_t j = -1; j <= n; ++j) {
    for (std::int64_t i = -1; i <= n; ++i) {
      // Padding: a copy of the nearest edge cell (transmissive walls; the
      // corners are never read).
      const auto s =
          initial_flow(std::clamp<std::int64_t>(i, 0, n - 1), std::clamp<std::int64_t>(j, 0, n - 1), n);
      for (std::size_t v = 0; v < kVariables; ++v) host.at(v, grid.at(i, j)) = s.conserved(v);
    }
  }
  return host;
}

// The hand-written physics, for the SoA kernel and the host reference: the
// same FORCE flux as euler_physics.hpp, spelt out for a plain struct.
struct PlainCell {
  float rho, energy, mx, my;
};

WEFT_HOST_DEVICE inline PlainCell physical_flux(const PlainCell& u, int dim, float gamma) {
  const float m = dim == 0 ? u.mx : u.my;
  const float velocity = m / u.rho;
  const float pressure = (gamma - 1.0f) * (u.energy - 0.5f * (u.mx * u.mx + u.my * u.my) / u.rho);
  PlainCell f{m, (u.energy + pressure) * velocity, u.mx * velocity, u.my * velocity};
  if (dim == 0) {
    f.mx += pressure;
  } else {
    f.my += pressure;
  }
  return f;
}

// The mean of the Lax-Friedrichs and the Richtmyer flux of one variable.
WEFT_HOST_DEVICE inline float force_mean(float left, float right, float left_flux, float right_flux,
                                         float richtmyer_flux, float dx_over_dt) {
  const float lax_friedrichs = 0.5f * (left_flux + right_flux) + 0.5f * dx_over_dt * (left - right);
  return 0.5f * (lax_friedrichs + richtmyer_flux);
}

WEFT_HOST_DEVICE inline PlainCell plain_force_flux(const PlainCell& l, const PlainCell& r, int dim,
                                                   float dt_over_dx, float gamma) {
  const PlainCell fl = physical_flux(l, dim, gamma), fr = physical_flux(r, dim, gamma);
  const float half_dt_over_dx = 0.5f * dt_over_dx;
  const PlainCell half_step{0.5f * (l.rho + r.rho) + half_dt_over_dx * (fl.rho - fr.rho),
                            0.5f * (l.energy + r.energy) + half_dt_over_dx * (fl.energy - fr.energy),
                            0.5f * (l.mx + r.mx) + half_dt_over_dx * (fl.mx - fr.mx),
                            0.5f * (l.my + r.my) + half_dt_over_dx * (fl.my - fr.my)};
  const PlainCell fh = physical_flux(half_step, dim, gamma);
  const float dx_over_dt = 1.0f / dt_over_dx;
  return PlainCell{force_mean(l.rho, r.rho, fl.rho, fr.rho, fh.rho, dx_over_dt),
                   force_mean(l.energy, r.energy, fl.energy, fr.energy, fh.energy, dx_over_dt),
                   force_mean(l.mx, r.mx, fl.mx, fr.mx, fh.mx, dx_over_dt),
                   force_mean(l.my, r.my, fl.my, fr.my, fh.my, dx_over_dt)};
}

WEFT_HOST_DEVICE inline float step_value(float u, float east, float west, float north, float south,
                                         float dt_over_dx) {
  return u - dt_over_dx * (east - west) - dt_over_dx * (north - south);
}

// The new state of cell k; `load(k)` reads the old state of cell k, whose
// neighbours along x and y are k -+ 1 and k -+ pitch.
template <class Load>
WEFT_HOST_DEVICE inline PlainCell plain_step(const Load& load, std::int64_t k, std::int64_t pitch,
                                             float dt_over_dx, float gamma) {
  const PlainCell centre = load(k);
  const PlainCell east = plain_force_flux(centre, load(k + 1), 0, dt_over_dx, gamma);
  const PlainCell west = plain_force_flux(load(k - 1), centre, 0, dt_over_dx, gamma);
  const PlainCell north = plain_force_flux(centre, load(k + pitch), 1, dt_over_dx, gamma);
  const PlainCell south = plain_force_flux(load(k - pitch), centre, 1, dt_over_dx, gamma);
  return PlainCell{
      step_value(centre.rho, east.rho, west.rho, north.rho, south.rho, dt_over_dx),
      step_value(centre.energy, east.energy, west.energy, north.energy, south.energy, dt_over_dx),
      step_value(centre.mx, east.mx, west.mx, north.mx, south.mx, dt_over_dx),
      step_value(centre.my, east.my, west.my, north.my, south.my, dt_over_dx)};
}

__global__ void __launch_bounds__(kThreadsPerBlock)
    hand_flux_step(const float* __restrict__ rho, const float* __restrict__ energy,
                   const float* __restrict__ mx, const float* __restrict__ my, float* __restrict__ rho_out,
                   float* __restrict__ energy_out, float* __restrict__ mx_out, float* __restrict__ my_out,
                   PaddedGrid grid, float dt_over_dx, float gamma) {
  const std::int64_t i = std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x;
  const std::int64_t j = std::int64_t{blockIdx.y} * blockDim.y + threadIdx.y;
  if (i >= grid.n || j >= grid.n) return;
  const std::int64_t k = grid.at(i, j);
  const auto load = [&](std::int64_t at) { return PlainCell{rho[at], energy[at], mx[at], my[at]}; };
  const PlainCell next = plain_step(load, k, grid.pitch(), dt_over_dx, gamma);
  rho_out[k] = next.rho;
  energy_out[k] = next.energy;
  mx_out[k] = next.mx;
  my_out[k] = next.my;
}

// weft's kernel: the physics of euler_physics.hpp on layout handles, as
// views_flux_difference's FluxDifference runs it on Tensor iterators.
template <class Layout>
struct FluxStep {
  const void* in;
  void* out;
  PaddedGrid grid;
  float dt_over_dx;
  float gamma;

  WEFT_HOST_DEVICE void operator()(std::int64_t i, std::int64_t j) const {
    using Storage = CellStorage<Layout>;
    using weft::euler::force_flux;
    using Owned = weft::euler::State<float, weft::ContiguousOwned>;
    const auto cells = static_cast<std::size_t>(grid.cells());
    // Every cell by value, through the read-only path (`in` is not written
    // while the kernel runs), as the hand kernel's const __restrict__
    // pointers let nvcc load it.
    const auto cell = [&](std::int64_t k) {
      return weft::read_only<Owned>(Storage::at(in, static_cast<std::size_t>(k), cells));
    };
    const std::int64_t k = grid.at(i, j), pitch = grid.pitch();
    const Owned centre = cell(k);
    const auto east = force_flux(centre, cell(k + 1), 0, dt_over_dx, gamma);
    const auto west = force_flux(cell(k - 1), centre, 0, dt_over_dx, gamma);
    const auto north = force_flux(centre, cell(k + pitch), 1, dt_over_dx, gamma);
    const auto south = force_flux(cell(k - pitch), centre, 1, dt_over_dx, gamma);
    auto next = Storage::at(out, static_cast<std::size_t>(k), cells);
    for (std::size_t v = 0; v < kVariables; ++v) {
      next.conserved(v) = centre.conserved(v) - dt_over_dx * (east.conserved(v) - west.conserved(v)) -
                          dt_over_dx * (north.conserved(v) - south.conserved(v));
    }
  }
};

// Calls row(j) for every j in [0, rows), spread over the host's cores.
template <class Row>
void for_each_row_in_parallel(std::int64_t rows, const Row& row) {
  const std::int64_t threads = std::clamp<std::int64_t>(std::thread::hardware_concurrency(), 1, 64);
  std::vector<std::thread> team;
  for (std::int64_t t = 0; t < threads; ++t) {
    team.emplace_back([&row, rows, threads, t] {
      for (std::int64_t j = t; j < rows; j += threads) row(j);
    });
  }
  for (std::thread& member : team) member.join();
}

HostGrid host_step(const HostGrid& in) {
  HostGrid out(in.grid);
  const PaddedGrid grid = in.grid;
  const auto load = [&in](std::int64_t k) {
    return PlainCell{in.at(0, k), in.at(1, k), in.at(2, k), in.at(3, k)};
  };
  for_each_row_in_parallel(grid.n, [&](std::int64_t j) {
    for (std::int64_t i = 0; i < grid.n; ++i) {
      const std::int64_t k = grid.at(i, j);
      const PlainCell next = plain_step(load, k, grid.pitch(), kDtOverDx, kGamma);
      out.at(0, k) = next.rho;
      out.at(1, k) = next.energy;
      out.at(2, k) = next.mx;
      out.at(3, k) = next.my;
    }
  });
  return out;
}

// Fails unless every interior value of `got` is within 8 float epsilons of
// `scale` of `expected`'s (see the verification notes at the top); returns
// how many were not bitwise equal.
std::size_t check_step(const char* what, const HostGrid& got, const HostGrid& expected, float scale) {
  const float tolerance = 8 * std::numeric_limits<float>::epsilon() * scale;
  const PaddedGrid grid = expected.grid;
  std::size_t inexact = 0;
  for (std::int64_t j = 0; j < grid.n; ++j) {
    for (std::int64_t i = 0; i < grid.n; ++i) {
      const std::int64_t k = grid.at(i, j);
      for (std::size_t v = 0; v < kVariables; ++v) {
        const float value = got.at(v, k), want = expected.at(v, k);
        if (value != want) ++inexact;
        if (!(std::abs(value - want) <= tolerance)) {  // NaN (poison) fails too
          fail(std::string(what) + ": cell (" + std::to_string(i) + ", " + std::to_string(j) + ") variable " +
               std::to_string(v) + " is " + std::to_string(value) + ", the host computed " +
               std::to_string(want) + " (tolerance " + std::to_string(tolerance) + ")");
        }
      }
    }
  }
  return inexact;
}

// The largest magnitude of any conserved variable in the interior.
float largest_value(const HostGrid& host) {
  float largest = 0;
  for (std::int64_t j = 0; j < host.grid.n; ++j)
    for (std::int64_t i = 0; i < host.grid.n; ++i)
      for (std::size_t v = 0; v < kVariables; ++v)
        largest = std::max(largest, std::abs(host.at(v, host.grid.at(i, j))));
  return largest;
}

// The input and output state of one layout in device memory, weft's way.
template <class Layout>
class WeftGrid {
 public:
  using Storage = CellStorage<Layout>;

  WeftGrid(const weft::CudaSpace& space, PaddedGrid grid)
      : grid_(grid), in_(space, bytes(grid)), out_(space, bytes(grid)) {}

  static std::size_t bytes(PaddedGrid grid) { return Storage::bytes(static_cast<std::size_t>(grid.cells())); }

  const void* input() const { return in_.data(); }

  void load(const HostGrid& initial, cudaStream_t stream) const {
    weft::ElementArray<Cell<Layout>> host(cells());
    for (std::size_t k = 0; k < cells(); ++k) {
      auto cell = host[k];
      for (std::size_t v = 0; v < kVariables; ++v) cell.conserved(v) = initial.values[v][k];
    }
    upload(in_.data(), host.data(), host.bytes(), stream);
    poison(out_.data(), out_.size(), stream);
  }
  void step(cudaStream_t stream) const {
    weft::cuda::parallel_for(stream, weft::MDRangePolicy<2>({0, 0}, {grid_.n, grid_.n}),
                             FluxStep<Layout>{in_.data(), out_.data(), grid_, kDtOverDx, kGamma});
  }
  HostGrid result(cudaStream_t stream) const {
    weft::ElementArray<Cell<Layout>> host(cells());
    download(host.data(), out_.data(), host.bytes(), stream);
    HostGrid values(grid_);
    for (std::size_t k = 0; k < cells(); ++k) {
      const auto cell = host[k];
      for (std::size_t v = 0; v < kVariables; ++v) values.values[v][k] = cell.conserved(v);
    }
    return values;
  }

 private:
  std::size_t cells() const { return static_cast<std::size_t>(grid_.cells()); }

  PaddedGrid grid_;
  DeviceBuffer in_, out_;
};

class HandGrid {
 public:
  HandGrid(const weft::CudaSpace& space, PaddedGrid grid)
      : grid_(grid), in_(space, bytes(grid)), out_(space, bytes(grid)) {}

  static std::size_t bytes(PaddedGrid grid) {
    return kVariables * static_cast<std::size_t>(grid.cells()) * sizeof(float);
  }

  void load(const HostGrid& initial, cudaStream_t stream) const {
    for (std::size_t v = 0; v < kVariables; ++v)
      upload(array(in_, v), initial.values[v].data(), array_bytes(), stream);
    poison(out_.data(), out_.size(), stream);
  }
  void step(cudaStream_t stream) const {
    const dim3 block(kThreadsPerBlock, 1);  // as weft's launch shape for rows this wide
    const dim3 grid(static_cast<unsigned>((grid_.n + block.x - 1) / block.x), static_cast<unsigned>(grid_.n));
    hand_flux_step<<<grid, block, 0, stream>>>(array(in_, 0), array(in_, 1), array(in_, 2), array(in_, 3),
                                               array(out_, 0), array(out_, 1), array(out_, 2), array(out_, 3),
                                               grid_, kDtOverDx, kGamma);
    check_launch("hand_flux_step<<<>>>");
  }
  HostGrid result(cudaStream_t stream) const {
    HostGrid values(grid_);
    for (std::size_t v = 0; v < kVariables; ++v)
      download(values.values[v].data(), array(out_, v), array_bytes(), stream);
    return values;
  }

 private:
  std::size_t array_bytes() const { return static_cast<std::size_t>(grid_.cells()) * sizeof(float); }
  float* array(const DeviceBuffer& buffer, std::size_t v) const {
    return static_cast<float*>(buffer.data()) + v * static_cast<std::size_t>(grid_.cells());
  }

  PaddedGrid grid_;
  DeviceBuffer in_, out_;
};

// One step checked against the host's, then timed (every step reads the
// same input and overwrites the same output). Returns us per step and adds
// the values that were not bitwise equal to `inexact`.
template <class Grid>
double verified_us_per_step(const Grid& contender, const char* what, const HostGrid& initial,
                            const HostGrid& expected, float scale, cudaStream_t stream, int repetitions,
                            int operations, std::size_t& inexact) {
  contender.load(initial, stream);
  contender.step(stream);
  inexact += check_step(what, contender.result(stream), expected, scale);
  return kMicro * best_ms_per_operation(stream, repetitions, operations, [&] { contender.step(stream); });
}

void flux_difference(const Options& opt, Reporter& out) {
  const std::vector<std::int64_t> sides =
      opt.quick ? std::vector<std::int64_t>{512} : std::vector<std::int64_t>{1024, 2048, 4096};
  weft::DeviceStreams gpu(kDevice);
  const cudaStream_t stream = gpu.compute_stream();
  const weft::CudaSpace space(kDevice);

  for (const std::int64_t side : sides) {
    const PaddedGrid grid{side};
    const std::string params = std::to_string(side) + "^2";
    const std::size_t state_bytes =
        static_cast<std::size_t>(grid.cells()) * sizeof(Cell<weft::ContiguousOwned>);
    // At 4096^2: 270 MB per state, 1.9 GB in all.
    const std::size_t needed = 2 * WeftGrid<weft::StridedView>::bytes(grid) +
                               2 * WeftGrid<weft::ContiguousView>::bytes(grid) + 2 * HandGrid::bytes(grid) +
                               state_bytes;
    if (!device_memory_for("cuda_flux_difference", params.c_str(), needed)) continue;

    const HostGrid initial = initial_grid(grid);
    const HostGrid expected = host_step(initial);
    const std::int64_t probe = grid.at(side / 3, side / 5);
    if (expected.at(0, probe) == initial.at(0, probe) && expected.at(2, probe) == initial.at(2, probe))
      fail("flux difference: the host's step left the flow unchanged");
    const float scale = largest_value(initial);

    const WeftGrid<weft::StridedView> strided(space, grid);
    const WeftGrid<weft::ContiguousView> contiguous(space, grid);
    const HandGrid hand(space, grid);
    const DeviceBuffer copy(space, state_bytes);

    // Enough steps per timing that launch gaps do not count at 512^2.
    const int operations =
        static_cast<int>(std::clamp<std::int64_t>((std::int64_t{1} << 26) / (side * side), 1, 100));
    const int reps = opt.repetitions;
    std::size_t inexact = 0;
    const double strided_us = verified_us_per_step(strided, "flux difference strided", initial, expected,
                                                   scale, stream, reps, operations, inexact);
    const double contiguous_us = verified_us_per_step(contiguous, "flux difference contiguous", initial,
                                                      expected, scale, stream, reps, operations, inexact);
    const double hand_us = verified_us_per_step(hand, "flux difference hand SoA", initial, expected, scale,
                                                stream, reps, operations, inexact);
    const double copy_us =
        kMicro * best_ms_per_operation(stream, reps, operations, [&] {
          check(cudaMemcpyAsync(copy.data(), strided.input(), state_bytes, cudaMemcpyDeviceToDevice, stream),
                "cudaMemcpyAsync (device to device)");
        });
    if (inexact > 0) {
      std::fprintf(stderr,
                   "cuda_flux_difference: %s: %zu of %lld values agree with the host within tolerance, not "
                   "bitwise (nvcc fuses multiply-adds)\n",
                   params.c_str(), inexact, static_cast<long long>(3 * kVariables * side * side));
    }

    const char* name = "cuda_flux_difference";
    out.compare(std::string(name) + ".strided", params, "us/step", {"weft", strided_us},
                {"hand SoA", hand_us});
    out.compare(std::string(name) + ".contiguous", params, "us/step", {"weft", contiguous_us},
                {"hand SoA", hand_us});
    out.compare(std::string(name) + ".layouts", params + " goal<1", "us/step", {"strided", strided_us},
                {"contiguous", contiguous_us});
    const double cells = static_cast<double>(side * side);
    // Gcells/s from us: cells / (us * 1e3).
    out.compare(std::string(name) + ".cells", params + " higher=better", "Gcells/s",
                {"strided", cells / (strided_us * 1e3)}, {"hand SoA", cells / (hand_us * 1e3)});
    out.compare(std::string(name) + ".bandwidth", params + " higher=better", "GB/s",
                {"strided", 32.0 * cells / (strided_us * 1e3)},
                {"D2D copy", 2.0 * static_cast<double>(state_bytes) / (copy_us * 1e3)});
  }
}

}  // namespace

WEFT_BENCHMARK(cuda_particle_update) {
  if (!gpu_present("cuda_particle_update")) return;
  particle_update(opt, out);
}

WEFT_BENCHMARK(cuda_flux_difference) {
  if (!gpu_present("cuda_flux_difference")) return;
  flux_difference(opt, out);
}
