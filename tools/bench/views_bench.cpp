// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Views and Tensors (Ripple section 7): the kernels of Ripple's fine-grained
// benchmarks written with weft, each against a hand-written loop over plain
// arrays in the same process.
//
//   views_saxpy            y = a x + y (float): a graph split over a Tensor, and
//                          parallel_for over raw arrays, against an OpenMP loop.
//                          Goal: time ratio <= 1.11 (90% of the loop's speed).
//   views_particle_update  x += v dt for 3D particles (float) in a Tensor of a
//                          polymorphic-layout Particle, strided (struct of arrays)
//                          against a struct-of-arrays loop, contiguous (array of
//                          structs) against an array-of-structs loop, and strided
//                          against contiguous. Goal: each <= 1.11 of its loop, and
//                          strided faster than contiguous.
//   views_flux_difference  one finite-volume step of the 2D Euler equations with
//                          FORCE fluxes on all four faces of every cell, from a
//                          padded input Tensor (concurrent_padded_access) to an
//                          output Tensor, against the same physics hand-written
//                          over plain struct-of-arrays. Goal: <= 1.11.
//   views_triad            a = b + s c (double) as a graph split, in GB/s against
//                          memcpy of an array of the same size by as many threads.
//                          Goal: triad / memcpy >= 0.85 (higher is better here).
//
// Fairness. weft and every baseline use opt.threads threads: the Executor
// has that many CPU workers and OpenMP loops ask for num_threads(threads),
// static schedule. The baselines are what a careful hand would write: `omp
// parallel for simd`, or for the Euler step a row function with restrict
// pointers, so that the compiler vectorises them (check with -fopt-info-vec;
// the array-of-structs particle loop is the one that stays scalar, as
// weft's contiguous kernel does). Every array, weft's or a baseline's, comes
// from HostSpace (page aligned) and is zeroed on the main thread (a Tensor
// zeroes its blocks on the constructing thread), so first touch places them
// alike; the main thread then writes the initial values of both.
//
// Timing. Each contender runs a warm-up pass (which also lowers a graph),
// then 4 * repetitions timed passes (2 * with --quick), the contenders taking
// turns pass by pass, so that all see the same noisy machine; the fastest
// pass is reported. Between two passes the program sleeps 10 ms so that the
// previous runtime's threads (OpenMP's spin-waiting team, weft's workers)
// are idle first. A weft pass is executor.run(graph).wait().get(): graph
// start-up and padding copies are part of it.
//
// Verification. After the timings every result is compared with its
// baseline's: bitwise for saxpy, the particles and the triad (the
// cumulative ones after the same number of passes), and for the Euler step
// within 4 float epsilons of each variable's largest magnitude (see
// check_flux_difference; in practice it is bitwise too, and a note on
// stderr says when not). A mismatch names the first bad element and exits 1.
#include "bench.hpp"
#include "particle.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <omp.h>

#include "euler_physics.hpp"

#include <weft/backends/host_device.hpp>
#include <weft/backends/memory_space.hpp>
#include <weft/graph/graph.hpp>
#include <weft/runtime/executor.hpp>
#include <weft/runtime/executor_config.hpp>
#include <weft/views/block_kernel.hpp>
#include <weft/views/boundary_loader.hpp>
#include <weft/views/parallel_for.hpp>
#include <weft/views/polymorphic_layout.hpp>
#include <weft/views/range_policy.hpp>
#include <weft/views/storage_descriptor.hpp>
#include <weft/views/tensor.hpp>
#include <weft/views/unrolled_for.hpp>
#include <weft/views/vector.hpp>

namespace {

using weft::bench::cpu_only;
using weft::bench::Options;
using weft::bench::Reporter;

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "views: %s\n", message.c_str());
  std::exit(1);
}

// Blocks per worker of the split tensors. One block per worker leaves a
// worker idle whenever another is slow to start its block; two give the
// scheduler room to balance. views_saxpy reports both (within noise of each
// other on a quiet 2-core machine).
constexpr int kBlocksPerThread = 2;

std::string power_of_two(std::size_t n) {
  int log = 0;
  while ((std::size_t{1} << (log + 1)) <= n) ++log;
  return (std::size_t{1} << log) == n ? "2^" + std::to_string(log) : std::to_string(n);
}

// A baseline's array: from HostSpace and zeroed on the calling thread, as a
// Tensor's blocks are.
template <class T>
class HostArray {
 public:
  explicit HostArray(std::size_t n)
      : size_(n), data_(static_cast<T*>(weft::HostSpace{}.allocate(n * sizeof(T)))) {
    std::memset(static_cast<void*>(data_), 0, n * sizeof(T));
  }
  HostArray(HostArray&& other) noexcept
      : size_(std::exchange(other.size_, 0)), data_(std::exchange(other.data_, nullptr)) {}
  HostArray& operator=(HostArray&&) = delete;
  ~HostArray() {
    if (data_ != nullptr) weft::HostSpace{}.deallocate(data_, size_ * sizeof(T));
  }

  T* data() const noexcept { return data_; }
  T& operator[](std::size_t i) const noexcept { return data_[i]; }
  std::size_t size() const noexcept { return size_; }

 private:
  std::size_t size_;
  T* data_;
};

// Calls f(it) for every interior cell of a tensor, on the calling thread.
template <class T, std::size_t D, class F>
void for_each_cell(const weft::Tensor<T, D>& tensor, F&& f) {
  auto visit = [&f](auto& it) { f(it); };
  for (std::size_t b = 0; b < tensor.block_count(); ++b) weft::run_block_kernel(b, visit, tensor);
}

template <class T>
void check_equal(const char* what, std::size_t index, T got, T expected) {
  if (std::memcmp(&got, &expected, sizeof(T)) != 0) {
    fail(std::string(what) + ": element " + std::to_string(index) + " is " + std::to_string(got) +
         ", the baseline computed " + std::to_string(expected));
  }
}

// ---- timing ---------------------------------------------------------------------

// One way of doing a benchmark's work: run() does one pass.
struct Contender {
  std::string name;
  std::function<void()> run;
  double best = std::numeric_limits<double>::infinity();  // seconds per pass
};

void let_threads_settle() { std::this_thread::sleep_for(std::chrono::milliseconds(10)); }

// Timed passes per contender: many short samples rather than a few long
// ones, so that each contender finds a moment when the machine is quiet.
int timed_passes(const Options& opt) { return std::max(1, opt.repetitions) * (opt.quick ? 2 : 4); }
// Passes each contender runs in all, the warm-up included (for the checks of
// cumulative updates).
int total_passes(const Options& opt) { return 1 + timed_passes(opt); }

// A warm-up pass each, then timed passes, the contenders in turn (see the
// fairness notes at the top).
void race(std::vector<Contender>& contenders, const Options& opt) {
  for (Contender& c : contenders) {
    c.run();
    let_threads_settle();
  }
  for (int pass = 0; pass < timed_passes(opt); ++pass) {
    for (Contender& c : contenders) {
      c.best = std::min(c.best, weft::bench::seconds(c.run));
      let_threads_settle();
    }
  }
}

constexpr double kMicro = 1e6;

// ---- views_saxpy --------------------------------------------------------------------

float saxpy_x(std::size_t i) { return static_cast<float>(i % 1000) * 0.001f; }
float saxpy_y(std::size_t i) { return static_cast<float>(i % 77) * 0.25f; }

struct Saxpy {
  template <class X, class Y>
  WEFT_HOST_DEVICE void operator()(X& x, Y& y, float a) const {
    *y = a * *x + *y;
  }
};

void saxpy(const Options& opt, Reporter& out) {
  const std::size_t n = opt.quick ? std::size_t{1} << 16 : std::size_t{1} << 25;
  const float a = 0.5f;
  weft::Executor executor(cpu_only(opt.threads));

  HostArray<float> omp_x(n), omp_y(n);  // the OpenMP loop's
  HostArray<float> pf_x(n), pf_y(n);    // parallel_for's: raw arrays a user already has
  for (std::size_t i = 0; i < n; ++i) {
    omp_x[i] = pf_x[i] = saxpy_x(i);
    omp_y[i] = pf_y[i] = saxpy_y(i);
  }
  // The split: one graph node per block, with one and with two blocks per thread.
  const std::size_t block_counts[2] = {static_cast<std::size_t>(opt.threads),
                                       static_cast<std::size_t>(2 * opt.threads)};
  std::vector<weft::Tensor<float, 1>> xs, ys;
  std::vector<weft::Graph> graphs(2);
  for (std::size_t v = 0; v < 2; ++v) {
    xs.emplace_back(weft::Extents<1>{block_counts[v]}, n);
    ys.emplace_back(weft::Extents<1>{block_counts[v]}, n);
    for_each_cell(xs[v], [](auto& it) { *it = saxpy_x(static_cast<std::size_t>(it.global_index(0))); });
    for_each_cell(ys[v], [](auto& it) { *it = saxpy_y(static_cast<std::size_t>(it.global_index(0))); });
    graphs[v].split(Saxpy{}, xs[v], ys[v], a);
  }

  const int threads = opt.threads;
  const auto count = static_cast<std::int64_t>(n);
  std::vector<Contender> c;
  c.push_back({"OpenMP", [threads, count, a, x = omp_x.data(), y = omp_y.data()] {
#pragma omp parallel for simd num_threads(threads) schedule(static)
                 for (std::int64_t i = 0; i < count; ++i) y[i] = a * x[i] + y[i];
               }});
  const auto saxpy_at = [a, x = pf_x.data(), y = pf_y.data()](std::int64_t i) { y[i] = a * x[i] + y[i]; };
  c.push_back({"parallel_for", [&executor, &saxpy_at, count] {
                 weft::parallel_for(weft::RangePolicy<std::int64_t>(executor, 0, count), saxpy_at);
               }});
  for (std::size_t v = 0; v < 2; ++v)
    c.push_back({"split", [&executor, &g = graphs[v]] { executor.run(g).wait().get(); }});
  race(c, opt);

  for (std::size_t i = 0; i < n; ++i) check_equal("saxpy parallel_for", i, pf_y[i], omp_y[i]);
  for (std::size_t v = 0; v < 2; ++v) {
    for_each_cell(ys[v], [&omp_y](auto& it) {
      const auto i = static_cast<std::size_t>(it.global_index(0));
      check_equal("saxpy split", i, *it, omp_y[i]);
    });
  }
  // The baseline itself, on a sample of elements.
  for (std::size_t i = 0; i < n; i += n / 97 + 1) {
    float expected = saxpy_y(i);
    for (int pass = 0; pass < total_passes(opt); ++pass) expected = a * saxpy_x(i) + expected;
    check_equal("saxpy OpenMP", i, omp_y[i], expected);
  }

  const std::string size = "n=" + power_of_two(n);
  const weft::bench::Measurement omp{"OpenMP", c[0].best * kMicro};
  out.compare("views_saxpy.parallel_for", size + " goal<=1.11", "us/pass", {"weft", c[1].best * kMicro}, omp);
  for (std::size_t v = 0; v < 2; ++v) {
    out.compare("views_saxpy.split", size + " P=" + std::to_string(block_counts[v]) + " goal<=1.11",
                "us/pass", {"weft", c[2 + v].best * kMicro}, omp);
  }
}

// ---- views_particle_update ------------------------------------------------------------

using weft::bench::Particle;  // particle.hpp

// The hand loops' array-of-structs element.
struct PlainParticle {
  float position[3];
  float velocity[3];
};

float initial_position(std::size_t i, std::size_t d) { return static_cast<float>(i % 1024 + d); }
float initial_velocity(std::size_t i, std::size_t d) {
  return static_cast<float>((i * 7 + d) % 13) * 0.125f - 0.75f;
}

struct UpdateParticle {
  template <class It>
  WEFT_HOST_DEVICE void operator()(It& it, float dt) const {
    (*it).update(dt);
  }
};

template <class Layout>
weft::Tensor<Particle<Layout>, 1> make_particles(std::size_t blocks, std::size_t n) {
  weft::Tensor<Particle<Layout>, 1> particles({blocks}, n);
  for_each_cell(particles, [](auto& it) {
    auto p = *it;
    const auto i = static_cast<std::size_t>(it.global_index(0));
    for (std::size_t d = 0; d < 3; ++d) {
      p.position(d) = initial_position(i, d);
      p.velocity(d) = initial_velocity(i, d);
    }
  });
  return particles;
}

void particle_update(const Options& opt, Reporter& out) {
  const std::size_t n = opt.quick ? std::size_t{1} << 14 : std::size_t{1} << 23;
  const float dt = 0.01f;
  const auto blocks = static_cast<std::size_t>(kBlocksPerThread * opt.threads);
  weft::Executor executor(cpu_only(opt.threads));

  auto strided = make_particles<weft::StridedView>(blocks, n);
  auto contiguous = make_particles<weft::ContiguousView>(blocks, n);
  weft::Graph strided_graph, contiguous_graph;
  strided_graph.split(UpdateParticle{}, strided, dt);
  contiguous_graph.split(UpdateParticle{}, contiguous, dt);

  std::vector<HostArray<float>> soa;  // x, y, z, vx, vy, vz
  for (int a = 0; a < 6; ++a) soa.emplace_back(n);
  HostArray<PlainParticle> aos(n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t d = 0; d < 3; ++d) {
      aos[i].position[d] = soa[d][i] = initial_position(i, d);
      aos[i].velocity[d] = soa[3 + d][i] = initial_velocity(i, d);
    }
  }

  const int threads = opt.threads;
  const auto count = static_cast<std::int64_t>(n);
  std::vector<Contender> c;
  c.push_back({"hand-SoA", [threads, count, dt, x = soa[0].data(), y = soa[1].data(), z = soa[2].data(),
                            vx = soa[3].data(), vy = soa[4].data(), vz = soa[5].data()] {
#pragma omp parallel for simd num_threads(threads) schedule(static)
                 for (std::int64_t i = 0; i < count; ++i) {
                   x[i] += vx[i] * dt;
                   y[i] += vy[i] * dt;
                   z[i] += vz[i] * dt;
                 }
               }});
  c.push_back({"hand-AoS", [threads, count, dt, p = aos.data()] {
#pragma omp parallel for simd num_threads(threads) schedule(static)
                 for (std::int64_t i = 0; i < count; ++i) {
                   for (int d = 0; d < 3; ++d) p[i].position[d] += p[i].velocity[d] * dt;
                 }
               }});
  c.push_back({"strided", [&] { executor.run(strided_graph).wait().get(); }});
  c.push_back({"contiguous", [&] { executor.run(contiguous_graph).wait().get(); }});
  race(c, opt);

  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t d = 0; d < 3; ++d) check_equal("particles hand-AoS", i, aos[i].position[d], soa[d][i]);
  for_each_cell(strided, [&soa](auto& it) {
    const auto i = static_cast<std::size_t>(it.global_index(0));
    for (std::size_t d = 0; d < 3; ++d) check_equal("particles strided", i, (*it).position(d), soa[d][i]);
  });
  for_each_cell(contiguous, [&soa](auto& it) {
    const auto i = static_cast<std::size_t>(it.global_index(0));
    for (std::size_t d = 0; d < 3; ++d) check_equal("particles contiguous", i, (*it).position(d), soa[d][i]);
  });
  for (std::size_t i = 0; i < n; i += n / 97 + 1) {
    float expected = initial_position(i, 1);
    for (int pass = 0; pass < total_passes(opt); ++pass) expected += initial_velocity(i, 1) * dt;
    check_equal("particles hand-SoA", i, soa[1][i], expected);
  }

  const std::string params = "n=" + power_of_two(n) + " P=" + std::to_string(blocks);
  const auto us = [&c](std::size_t k) { return c[k].best * kMicro; };
  out.compare("views_particle_update.strided", params + " goal<=1.11", "us/pass", {"weft", us(2)},
              {"hand-SoA", us(0)});
  out.compare("views_particle_update.contiguous", params + " goal<=1.11", "us/pass", {"weft", us(3)},
              {"hand-AoS", us(1)});
  out.compare("views_particle_update.layouts", params + " goal<1", "us/pass", {"strided", us(2)},
              {"contiguous", us(3)});
}

// ---- views_flux_difference ----------------------------------------------------------------

constexpr float kGamma = 1.4f;
constexpr float kPi = 3.14159265f;

// A smooth flow over the unit square, fast enough (|u| + c about 1.5) that
// dt / dx = 0.2 keeps the CFL number near 0.3.
weft::euler::State<float, weft::ContiguousOwned> initial_flow(std::size_t i, std::size_t j, std::size_t nx,
                                                              std::size_t ny) {
  const float x = (static_cast<float>(i) + 0.5f) / static_cast<float>(nx);
  const float y = (static_cast<float>(j) + 0.5f) / static_cast<float>(ny);
  const float sx = std::sin(2 * kPi * x), sy = std::sin(2 * kPi * y);
  return weft::euler::from_primitive(1.0f + 0.2f * sx * sy, 0.3f * std::cos(2 * kPi * y),
                                     0.2f * std::cos(2 * kPi * x), 1.0f + 0.1f * sx, kGamma);
}

// One finite-volume step at a cell, dx = dy: the FORCE flux across each of
// its four faces, and the state after dt.
struct FluxDifference {
  template <class In, class Out>
  WEFT_HOST_DEVICE void operator()(In& in, Out& out, float dt_over_dx, float gamma) const {
    using weft::dim_x;
    using weft::dim_y;
    using weft::euler::force_flux;
    const auto centre = *in;
    const auto east = force_flux(centre, *in.offset(dim_x, 1), dim_x, dt_over_dx, gamma);
    const auto west = force_flux(*in.offset(dim_x, -1), centre, dim_x, dt_over_dx, gamma);
    const auto north = force_flux(centre, *in.offset(dim_y, 1), dim_y, dt_over_dx, gamma);
    const auto south = force_flux(*in.offset(dim_y, -1), centre, dim_y, dt_over_dx, gamma);
    auto next = *out;
    for (std::size_t k = 0; k < next.conserved_count; ++k) {
      next.conserved(k) = centre.conserved(k) - dt_over_dx * (east.conserved(k) - west.conserved(k)) -
                          dt_over_dx * (north.conserved(k) - south.conserved(k));
    }
  }
};

// The baseline's physics, written out by hand for a plain struct.
struct Cell {
  float rho, energy, mx, my;
};

inline Cell physical_flux(const Cell& u, int dim, float gamma) {
  const float m = dim == 0 ? u.mx : u.my;
  const float velocity = m / u.rho;
  const float pressure = (gamma - 1.0f) * (u.energy - 0.5f * (u.mx * u.mx + u.my * u.my) / u.rho);
  Cell f{m, (u.energy + pressure) * velocity, u.mx * velocity, u.my * velocity};
  if (dim == 0) {
    f.mx += pressure;
  } else {
    f.my += pressure;
  }
  return f;
}

inline float force_component(float l, float r, float fl, float fr, float f_half, float dx_over_dt) {
  return 0.5f * ((0.5f * (fl + fr) + 0.5f * dx_over_dt * (l - r)) + f_half);
}

inline Cell force(const Cell& l, const Cell& r, int dim, float dt_over_dx, float gamma) {
  const Cell fl = physical_flux(l, dim, gamma), fr = physical_flux(r, dim, gamma);
  const float h = 0.5f * dt_over_dx;
  const Cell half{0.5f * (l.rho + r.rho) + h * (fl.rho - fr.rho),
                  0.5f * (l.energy + r.energy) + h * (fl.energy - fr.energy),
                  0.5f * (l.mx + r.mx) + h * (fl.mx - fr.mx), 0.5f * (l.my + r.my) + h * (fl.my - fr.my)};
  const Cell fh = physical_flux(half, dim, gamma);
  const float dx_over_dt = 1.0f / dt_over_dx;
  return Cell{force_component(l.rho, r.rho, fl.rho, fr.rho, fh.rho, dx_over_dt),
              force_component(l.energy, r.energy, fl.energy, fr.energy, fh.energy, dx_over_dt),
              force_component(l.mx, r.mx, fl.mx, fr.mx, fh.mx, dx_over_dt),
              force_component(l.my, r.my, fl.my, fr.my, fh.my, dx_over_dt)};
}

// The hand-written baseline's grid: four arrays (struct of arrays) of
// (nx + 2) x (ny + 2) cells, x fastest, one cell of padding all round.
struct PlainGrid {
  std::size_t nx, ny, pitch;
  HostArray<float> rho, energy, mx, my;
  PlainGrid(std::size_t nx_, std::size_t ny_)
      : nx(nx_), ny(ny_), pitch(nx_ + 2), rho(cells()), energy(cells()), mx(cells()), my(cells()) {}
  std::size_t cells() const { return (nx + 2) * (ny + 2); }
  // Cell (i, j) of the interior; -1 and nx / ny reach into the padding.
  std::size_t at(std::ptrdiff_t i, std::ptrdiff_t j) const {
    return static_cast<std::size_t>(j + 1) * pitch + static_cast<std::size_t>(i + 1);
  }
  Cell load(std::size_t k) const { return Cell{rho[k], energy[k], mx[k], my[k]}; }
  void store(std::size_t k, const Cell& c) const {
    rho[k] = c.rho;
    energy[k] = c.energy;
    mx[k] = c.mx;
    my[k] = c.my;
  }
};

// One row of the hand-written step, cells [first, first + n) of the padded
// arrays. Out of line with restrict pointers: that is what lets the
// compiler vectorise it (inlined into OpenMP's outlined region the restrict
// is lost, and `omp simd` stumbles over the Cell temporaries).
[[gnu::noinline]] void hand_flux_row(const float* __restrict rho, const float* __restrict energy,
                                     const float* __restrict mx, const float* __restrict my,
                                     float* __restrict rho_out, float* __restrict energy_out,
                                     float* __restrict mx_out, float* __restrict my_out, std::int64_t first,
                                     std::int64_t n, std::int64_t pitch, float dt_over_dx) {
  for (std::int64_t k = first; k < first + n; ++k) {
    const auto load = [&](std::int64_t at) { return Cell{rho[at], energy[at], mx[at], my[at]}; };
    const Cell centre = load(k);
    const Cell east = force(centre, load(k + 1), 0, dt_over_dx, kGamma);
    const Cell west = force(load(k - 1), centre, 0, dt_over_dx, kGamma);
    const Cell north = force(centre, load(k + pitch), 1, dt_over_dx, kGamma);
    const Cell south = force(load(k - pitch), centre, 1, dt_over_dx, kGamma);
    const auto update = [dt_over_dx](float u, float e, float w, float n_, float s) {
      return u - dt_over_dx * (e - w) - dt_over_dx * (n_ - s);
    };
    rho_out[k] = update(centre.rho, east.rho, west.rho, north.rho, south.rho);
    energy_out[k] = update(centre.energy, east.energy, west.energy, north.energy, south.energy);
    mx_out[k] = update(centre.mx, east.mx, west.mx, north.mx, south.mx);
    my_out[k] = update(centre.my, east.my, west.my, north.my, south.my);
  }
}

void hand_flux_difference(const PlainGrid& in, const PlainGrid& out, float dt_over_dx, int threads) {
  const auto nx = static_cast<std::int64_t>(in.nx), ny = static_cast<std::int64_t>(in.ny);
  const auto pitch = static_cast<std::int64_t>(in.pitch);
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t j = 0; j < ny; ++j) {
    hand_flux_row(in.rho.data(), in.energy.data(), in.mx.data(), in.my.data(), out.rho.data(),
                  out.energy.data(), out.mx.data(), out.my.data(), (j + 1) * pitch + 1, nx, pitch,
                  dt_over_dx);
  }
}

// The weft side: the input with one cell of padding, the output without.
template <class Layout>
struct EulerTensors {
  using Cell = weft::euler::State<float, Layout>;
  weft::Tensor<Cell, 2> in, out;
  weft::Graph graph;
  EulerTensors(std::size_t blocks, std::size_t nx, std::size_t ny, float dt_over_dx)
      : in({1, blocks}, 1, nx, ny), out({1, blocks}, nx, ny) {
    for_each_cell(in, [nx, ny](auto& it) {
      *it = initial_flow(static_cast<std::size_t>(it.global_index(0)),
                         static_cast<std::size_t>(it.global_index(1)), nx, ny);
    });
    // The tensor's outer edges, once: transmissive (zero-gradient) walls.
    weft::load_boundaries(in, weft::FirstOrderExtrapolation{});
    // Inner block edges: copied into each block's padding in every pass.
    graph.split(FluxDifference{}, weft::concurrent_padded_access(in), out, dt_over_dx, kGamma);
  }
};

// Compares a weft result with the baseline's. Both evaluate the same
// expressions in the same order, so they agree bitwise unless the compiler
// contracts or reorders differently on one side (FMA under -ffp-contract=fast,
// say); the check allows that much: 4 float epsilons of the variable's largest
// magnitude, a few roundings, while the step changes cells by ~1e-4 of that
// at 2048^2 (a wrong flux or neighbour shows up hundreds of times larger).
// Returns how many values were not bitwise equal.
template <class Layout>
std::size_t check_flux_difference(const char* what,
                                  const weft::Tensor<weft::euler::State<float, Layout>, 2>& result,
                                  const PlainGrid& expected) {
  const HostArray<float>* arrays[4] = {&expected.rho, &expected.energy, &expected.mx, &expected.my};
  float scale[4] = {};
  for (std::size_t v = 0; v < 4; ++v)
    for (std::size_t k = 0; k < expected.cells(); ++k)
      scale[v] = std::max(scale[v], std::abs((*arrays[v])[k]));
  std::size_t inexact = 0;
  for_each_cell(result, [&](auto& it) {
    const std::ptrdiff_t i = it.global_index(0), j = it.global_index(1);
    const auto cell = *it;
    for (std::size_t v = 0; v < 4; ++v) {
      const float got = cell.conserved(v), want = (*arrays[v])[expected.at(i, j)];
      if (got != want) ++inexact;
      const float tolerance = 4 * std::numeric_limits<float>::epsilon() * scale[v];
      if (!(std::abs(got - want) <= tolerance)) {
        fail(std::string(what) + ": cell (" + std::to_string(i) + ", " + std::to_string(j) + ") variable " +
             std::to_string(v) + " is " + std::to_string(got) + ", the baseline computed " +
             std::to_string(want) + " (tolerance " + std::to_string(tolerance) + ")");
      }
    }
  });
  return inexact;
}

void flux_difference(const Options& opt, Reporter& out) {
  const std::size_t side = opt.quick ? 64 : 2048;
  const float dt_over_dx = 0.2f;
  const auto blocks = static_cast<std::size_t>(kBlocksPerThread * opt.threads);
  weft::Executor executor(cpu_only(opt.threads));

  EulerTensors<weft::StridedView> strided(blocks, side, side, dt_over_dx);
  EulerTensors<weft::ContiguousView> contiguous(blocks, side, side, dt_over_dx);
  const PlainGrid plain_in(side, side), plain_out(side, side);
  for (std::ptrdiff_t j = -1; j <= static_cast<std::ptrdiff_t>(side); ++j) {
    for (std::ptrdiff_t i = -1; i <= static_cast<std::ptrdiff_t>(side); ++i) {
      // padding: a copy of the nearest edge cell (corners are never read)
      const auto clamp = [side](std::ptrdiff_t v) {
        return static_cast<std::size_t>(
            std::clamp<std::ptrdiff_t>(v, 0, static_cast<std::ptrdiff_t>(side) - 1));
      };
      const auto s = initial_flow(clamp(i), clamp(j), side, side);
      plain_in.store(plain_in.at(i, j), Cell{s.density(), s.energy(), s.momentum(0), s.momentum(1)});
    }
  }

  const int threads = opt.threads;
  std::vector<Contender> c;
  c.push_back({"hand-SoA", [&, threads] { hand_flux_difference(plain_in, plain_out, dt_over_dx, threads); }});
  c.push_back({"strided", [&] { executor.run(strided.graph).wait().get(); }});
  c.push_back({"contiguous", [&] { executor.run(contiguous.graph).wait().get(); }});
  race(c, opt);

  const std::size_t inexact = check_flux_difference("flux difference strided", strided.out, plain_out) +
                              check_flux_difference("flux difference contiguous", contiguous.out, plain_out);
  if (inexact > 0) {
    std::fprintf(stderr,
                 "views_flux_difference: %zu values agree with the baseline within tolerance, not bitwise\n",
                 inexact);
  }
  // The step really changed the flow (a kernel that wrote nothing would fail above too).
  if (plain_out.rho[plain_out.at(1, 1)] == plain_in.rho[plain_in.at(1, 1)] &&
      plain_out.mx[plain_out.at(7, 3)] == plain_in.mx[plain_in.at(7, 3)])
    fail("flux difference: the baseline's step left the flow unchanged");

  const std::string params = std::to_string(side) + "^2 P=" + std::to_string(blocks);
  const auto us = [&c](std::size_t k) { return c[k].best * kMicro; };
  out.compare("views_flux_difference.strided", params + " goal<=1.11", "us/pass", {"weft", us(1)},
              {"hand-SoA", us(0)});
  out.compare("views_flux_difference.contiguous", params + " goal<=1.11", "us/pass", {"weft", us(2)},
              {"hand-SoA", us(0)});
  out.compare("views_flux_difference.layouts", params, "us/pass", {"strided", us(1)}, {"contiguous", us(2)});
}

// ---- views_triad ----------------------------------------------------------------------

double triad_b(std::size_t i) { return static_cast<double>(i % 100) * 0.5; }
double triad_c(std::size_t i) { return static_cast<double>(i % 7) * 0.25; }

struct Triad {
  template <class A, class B, class C>
  WEFT_HOST_DEVICE void operator()(A& a, B& b, C& c, double s) const {
    *a = *b + s * *c;
  }
};

void triad(const Options& opt, Reporter& out) {
  const std::size_t n = opt.quick ? std::size_t{1} << 16 : std::size_t{1} << 24;
  const double s = 3.0;
  const auto blocks = static_cast<std::size_t>(kBlocksPerThread * opt.threads);
  weft::Executor executor(cpu_only(opt.threads));

  weft::Tensor<double, 1> a({blocks}, n), b({blocks}, n), c_tensor({blocks}, n);
  for_each_cell(b, [](auto& it) { *it = triad_b(static_cast<std::size_t>(it.global_index(0))); });
  for_each_cell(c_tensor, [](auto& it) { *it = triad_c(static_cast<std::size_t>(it.global_index(0))); });
  weft::Graph graph;
  graph.split(Triad{}, a, b, c_tensor, s);

  HostArray<double> source(n), copy(n);
  HostArray<double> omp_a(n), omp_b(n), omp_c(n);
  for (std::size_t i = 0; i < n; ++i) {
    source[i] = omp_b[i] = triad_b(i);
    omp_c[i] = triad_c(i);
  }

  const int threads = opt.threads;
  std::vector<Contender> c;
  c.push_back({"weft", [&] { executor.run(graph).wait().get(); }});
  // Each thread memcpy's its share, as the triad's threads each do theirs.
  c.push_back({"memcpy", [threads, n, src = source.data(), dst = copy.data()] {
#pragma omp parallel num_threads(threads)
                 {
                   const auto t = static_cast<std::size_t>(omp_get_thread_num());
                   const auto team = static_cast<std::size_t>(omp_get_num_threads());
                   const std::size_t begin = n * t / team, end = n * (t + 1) / team;
                   std::memcpy(dst + begin, src + begin, (end - begin) * sizeof(double));
                 }
               }});
  c.push_back({"OpenMP", [threads, s, count = static_cast<std::int64_t>(n), pa = omp_a.data(),
                          pb = omp_b.data(), pc = omp_c.data()] {
#pragma omp parallel for simd num_threads(threads) schedule(static)
                 for (std::int64_t i = 0; i < count; ++i) pa[i] = pb[i] + s * pc[i];
               }});
  race(c, opt);

  for_each_cell(a, [&omp_a](auto& it) {
    const auto i = static_cast<std::size_t>(it.global_index(0));
    check_equal("triad", i, *it, omp_a[i]);
  });
  for (std::size_t i = 0; i < n; ++i) {
    check_equal("triad OpenMP", i, omp_a[i], triad_b(i) + s * triad_c(i));
    check_equal("memcpy", i, copy[i], source[i]);
  }

  const double elements = static_cast<double>(n);
  const auto gbps = [&c](std::size_t k, double bytes) { return bytes / c[k].best * 1e-9; };
  const double weft = gbps(0, 24 * elements);
  const std::string params = "n=" + power_of_two(n) + " P=" + std::to_string(blocks);
  out.compare("views_triad", params + " higher=better goal>=0.85", "GB/s", {"weft", weft},
              {"memcpy", gbps(1, 16 * elements)});
  out.compare("views_triad", params + " higher=better", "GB/s", {"weft", weft},
              {"OpenMP", gbps(2, 24 * elements)});
}

}  // namespace

WEFT_BENCHMARK(views_saxpy) { saxpy(opt, out); }
WEFT_BENCHMARK(views_particle_update) { particle_update(opt, out); }
WEFT_BENCHMARK(views_flux_difference) { flux_difference(opt, out); }
WEFT_BENCHMARK(views_triad) { triad(opt, out); }
