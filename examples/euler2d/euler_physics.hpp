// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The 2D Euler equations of an ideal gas, written once for every place a
// cell's state can live: an owned value, or a handle on a cell of a strided
// (struct of arrays) or contiguous (array of structs) Tensor.
//
//   using Cell = weft::euler::State<float, weft::StridedView>;
//   weft::Tensor<Cell, 2> u({1, 4}, 1, nx, ny);                  // padding 1 for the fluxes
//   weft::euler::State<float, weft::ContiguousOwned> inflow{};
//   inflow.set_primitive(1.0f, 0.5f, 0.0f, 1.0f);              // rho, u, v, p (gamma 1.4)
//   u(0, 0) = inflow;                                          // copies the values in
//
//   // in a split kernel, `in` an iterator on u, `out` one on the next state:
//   const auto east = weft::euler::force_flux(*in, *in.offset(weft::dim_x, 1), weft::dim_x, dt / dx);
//   const auto west = weft::euler::force_flux(*in.offset(weft::dim_x, -1), *in, weft::dim_x, dt / dx);
//
// The state holds the conserved variables per unit volume, SI units:
//   density   rho          kg / m^3
//   energy    E            J / m^3     total energy: internal plus kinetic
//   momentum  rho * u_d    kg / (m^2 s), one per dimension
// and the equation of state is p = (gamma - 1) (E - rho |u|^2 / 2). A flux is
// the same four quantities per unit area and time (kg / (m^2 s), W / m^2,
// Pa), so a finite-volume update is U -= dt / dx (F_east - F_west) along each
// dimension.
//
// All four conserved variables are one Vector component of the storage, so
// the strided layout keeps each variable in its own array (unit-stride loads
// when a kernel walks a row) and code that treats the variables alike loops
// over conserved(k). gamma is a parameter everywhere (1.4, air, by default);
// it must be the same for every call on one flow.
#pragma once

#include <cmath>
#include <cstddef>
#include <type_traits>

#include <weft/backends/host_device.hpp>
#include <weft/views/polymorphic_layout.hpp>
#include <weft/views/storage_descriptor.hpp>
#include <weft/views/storage_layout.hpp>
#include <weft/views/vector.hpp>

namespace weft::euler {

// The ratio of specific heats of air, the usual test-problem gas.
template <class T>
inline constexpr T default_gamma = T(1.4);

// Parameters of the state's own value type, so that float states accept
// double literals (gamma 1.4, dt / dx) without a deduction conflict.
template <class T>
using scalar_t = std::type_identity_t<T>;

template <class T, class Layout>
struct State : PolymorphicLayout<State<T, Layout>> {
  static constexpr std::size_t dims = 2;
  // density, energy, then one momentum per dimension
  static constexpr std::size_t conserved_count = 2 + dims;
  using value_type = T;
  using Owned = State<T, ContiguousOwned>;
  using Storage = typename StorageDescriptor<Layout, Vector<T, conserved_count>>::Storage;

  // Conserved variable k, in the order density, energy, momentum(0), momentum(1).
  WEFT_HOST_DEVICE T& conserved(std::size_t k) noexcept { return storage.template get<0>(k); }
  WEFT_HOST_DEVICE const T& conserved(std::size_t k) const noexcept { return storage.template get<0>(k); }

  WEFT_HOST_DEVICE T& density() noexcept { return storage.template get<0, 0>(); }
  WEFT_HOST_DEVICE const T& density() const noexcept { return storage.template get<0, 0>(); }
  WEFT_HOST_DEVICE T& energy() noexcept { return storage.template get<0, 1>(); }
  WEFT_HOST_DEVICE const T& energy() const noexcept { return storage.template get<0, 1>(); }
  WEFT_HOST_DEVICE T& momentum(std::size_t dim) noexcept { return storage.template get<0>(2 + dim); }
  WEFT_HOST_DEVICE const T& momentum(std::size_t dim) const noexcept {
    return storage.template get<0>(2 + dim);
  }

  // m / s along `dim`.
  WEFT_HOST_DEVICE T velocity(std::size_t dim) const noexcept { return momentum(dim) / density(); }

  // rho |u|^2 / 2, J / m^3.
  WEFT_HOST_DEVICE T kinetic_energy() const noexcept {
    T momentum_squared = T(0);
    for (std::size_t d = 0; d < dims; ++d) momentum_squared += momentum(d) * momentum(d);
    return T(0.5) * momentum_squared / density();
  }

  // Pa, from the ideal-gas equation of state.
  WEFT_HOST_DEVICE T pressure(scalar_t<T> gamma = default_gamma<T>) const noexcept {
    return (gamma - T(1)) * (energy() - kinetic_energy());
  }

  // m / s; only meaningful for a physical state (positive density and pressure).
  WEFT_HOST_DEVICE T sound_speed(scalar_t<T> gamma = default_gamma<T>) const noexcept {
    using std::sqrt;
    return sqrt(gamma * pressure(gamma) / density());
  }

  // Sets the conserved variables from primitive ones: density (kg / m^3),
  // velocity (m / s) and pressure (Pa).
  WEFT_HOST_DEVICE void set_primitive(scalar_t<T> rho, scalar_t<T> u, scalar_t<T> v, scalar_t<T> p,
                                      scalar_t<T> gamma = default_gamma<T>) noexcept {
    density() = rho;
    momentum(0) = rho * u;
    momentum(1) = rho * v;
    energy() = p / (gamma - T(1)) + T(0.5) * rho * (u * u + v * v);
  }

  Storage storage;
};

// The free functions below are declared `inline` although templates need
// not be: GCC then inlines them under its larger limit for inline functions.
// Without it, force_flux (three fluxes) stays a call in every stencil
// kernel, whose loop then neither keeps its values in registers nor
// vectorises: the flux-difference benchmark ran 5 to 18 times slower.

// An owned state made from primitive variables (see State::set_primitive).
template <class T>
WEFT_HOST_DEVICE inline State<T, ContiguousOwned> from_primitive(
    T rho, scalar_t<T> u, scalar_t<T> v, scalar_t<T> p, scalar_t<T> gamma = default_gamma<T>) noexcept {
  State<T, ContiguousOwned> state{};
  state.set_primitive(rho, u, v, p, gamma);
  return state;
}

// The physical flux of the conserved variables across a face normal to
// `dim`: mass flux rho u_d, energy flux (E + p) u_d, momentum flux
// rho u_k u_d plus the pressure on the face.
template <class T, class Layout>
WEFT_HOST_DEVICE inline State<T, ContiguousOwned> flux(const State<T, Layout>& state, std::size_t dim,
                                                       scalar_t<T> gamma = default_gamma<T>) noexcept {
  const T velocity = state.velocity(dim);
  const T pressure = state.pressure(gamma);
  State<T, ContiguousOwned> f;
  f.density() = state.momentum(dim);
  f.energy() = (state.energy() + pressure) * velocity;
  for (std::size_t d = 0; d < State<T, Layout>::dims; ++d) f.momentum(d) = state.momentum(d) * velocity;
  f.momentum(dim) += pressure;
  return f;
}

// Toro's FORCE flux across the face between `left` and `right` (left lies
// on the low side along `dim`), for a time step dt on cells dx wide:
// the mean of the Lax-Friedrichs flux, which is monotone but diffusive, and
// the two-step Lax-Wendroff (Richtmyer) flux, which is second order but
// oscillates. The mean is first order, monotone and less diffusive than
// Lax-Friedrichs, and needs no Riemann solver or wave-speed estimate: only
// physical fluxes, which is why it suits a stencil benchmark and a GPU.
// Stable for CFL numbers (max |u| + c) dt / dx up to 1.
template <class T, class LeftLayout, class RightLayout>
WEFT_HOST_DEVICE inline State<T, ContiguousOwned> force_flux(const State<T, LeftLayout>& left,
                                                             const State<T, RightLayout>& right,
                                                             std::size_t dim, scalar_t<T> dt_over_dx,
                                                             scalar_t<T> gamma = default_gamma<T>) noexcept {
  using Owned = State<T, ContiguousOwned>;
  constexpr std::size_t n = Owned::conserved_count;
  const Owned left_flux = flux(left, dim, gamma);
  const Owned right_flux = flux(right, dim, gamma);

  // Richtmyer's first step: the state on the face half a time step later.
  Owned half_step;
  for (std::size_t k = 0; k < n; ++k) {
    half_step.conserved(k) = T(0.5) * (left.conserved(k) + right.conserved(k)) +
                             T(0.5) * dt_over_dx * (left_flux.conserved(k) - right_flux.conserved(k));
  }
  const Owned richtmyer = flux(half_step, dim, gamma);

  Owned force;
  const T dx_over_dt = T(1) / dt_over_dx;
  for (std::size_t k = 0; k < n; ++k) {
    const T lax_friedrichs = T(0.5) * (left_flux.conserved(k) + right_flux.conserved(k)) +
                             T(0.5) * dx_over_dt * (left.conserved(k) - right.conserved(k));
    force.conserved(k) = T(0.5) * (lax_friedrichs + richtmyer.conserved(k));
  }
  return force;
}

// The fastest signal speed in the cell, max over dimensions of |u_d| + c
// (m / s): the time step of an explicit scheme must keep
// max_wave_speed * dt / dx below the CFL limit.
template <class T, class Layout>
WEFT_HOST_DEVICE inline T max_wave_speed(const State<T, Layout>& state,
                                         scalar_t<T> gamma = default_gamma<T>) noexcept {
  using std::abs;
  const T sound = state.sound_speed(gamma);
  T fastest = T(0);
  for (std::size_t d = 0; d < State<T, Layout>::dims; ++d) {
    const T speed = abs(state.velocity(d)) + sound;
    fastest = speed > fastest ? speed : fastest;
  }
  return fastest;
}

}  // namespace weft::euler
