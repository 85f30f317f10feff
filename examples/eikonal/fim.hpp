// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The Fast Iterative Method (Jeong and Whitaker) for |grad phi| = 1 on a 2D
// grid, as a weft graph: the distance from one source cell, within a band.
//
//   weft::eikonal::Problem p{.nx = 64, .ny = 64, .band = 10};   // source at the centre
//   weft::eikonal::Solver<double, weft::StridedView> solver(p);
//   weft::Executor executor;
//   solver.run(executor);                   // passes until none changes a cell
//   double d = solver.distance(10, 20);     // +inf outside the band
//
// Contract: cell (i, j) has its centre at ((i + 0.5) h, (j + 0.5) h), h = 1
// / nx. Every pass is Jacobi-style: it reads only the previous pass's
// field, so the result is bitwise the same for any split and either layout,
// and equals the serial reference (reference.hpp). A cell takes a value only
// while it is at most band * h (the band); cells beyond keep +infinity.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>

#include <weft/weft.hpp>

namespace weft::eikonal {

struct Problem {
  std::size_t nx = 256, ny = 256;
  std::size_t band = 10;  // K: cells with a distance above K h stay at +inf
  std::size_t source_x = std::numeric_limits<std::size_t>::max();  // max: the centre, nx / 2
  std::size_t source_y = std::numeric_limits<std::size_t>::max();  // max: the centre, ny / 2
  std::size_t partitions = 1;                                      // along y

  std::size_t sx() const noexcept {
    return source_x == std::numeric_limits<std::size_t>::max() ? nx / 2 : source_x;
  }
  std::size_t sy() const noexcept {
    return source_y == std::numeric_limits<std::size_t>::max() ? ny / 2 : source_y;
  }
  double h() const noexcept { return 1.0 / static_cast<double>(nx); }
};

// A cell: its distance and whether the last pass lowered it (the FIM's
// active list: only cells next to a changed cell need solving again).
template <class T, class Layout>
struct Cell : PolymorphicLayout<Cell<T, Layout>> {
  using Storage = typename StorageDescriptor<Layout, T, int>::Storage;

  WEFT_HOST_DEVICE T& value() noexcept { return storage.template get<0>(); }
  WEFT_HOST_DEVICE const T& value() const noexcept { return storage.template get<0>(); }
  WEFT_HOST_DEVICE int& changed() noexcept { return storage.template get<1>(); }
  WEFT_HOST_DEVICE const int& changed() const noexcept { return storage.template get<1>(); }
  // What Graph::then_reduce sums (it converts each cell to the result's
  // type): 64 bits, as a grid may hold more than 2^31 cells.
  WEFT_HOST_DEVICE explicit operator std::int64_t() const noexcept { return changed(); }

  Storage storage;
};

// The first-order Godunov upwind solution at a cell of width h whose
// smallest neighbours are a (along x) and b (along y): the root of
// (u - a)^2 + (u - b)^2 = h^2, or the 1D update min(a, b) + h where that
// root would not lie above both (|a - b| >= h, which includes a negative
// discriminant, and an infinite neighbour).
template <class T>
WEFT_HOST_DEVICE inline T godunov_update(T a, T b, T h) noexcept {
  if (b < a) {
    const T t = a;
    a = b;
    b = t;
  }
  if (!(b - a < h)) return a + h;  // also inf - inf (NaN): a + h, still +inf
  const T d = a - b;
  return (a + b + std::sqrt(T(2) * h * h - d * d)) / T(2);
}

// One pass at one cell: from `in` (the previous pass, neighbours in the
// padding) into `out`. Neighbours outside the domain do not exist.
template <class T>
struct UpdateCell {
  template <class In, class Out>
  WEFT_HOST_DEVICE void operator()(In& in, Out& out, T h, T limit) const {
    constexpr T inf = std::numeric_limits<T>::infinity();
    T around[2][2] = {{inf, inf}, {inf, inf}};
    bool near_change = false;
    for (std::size_t d = 0; d < 2; ++d) {
      if (!in.is_global_first(d)) {
        const auto n = *in.offset(d, -1);
        around[d][0] = n.value();
        near_change = near_change || n.changed() != 0;
      }
      if (!in.is_global_last(d)) {
        const auto n = *in.offset(d, 1);
        around[d][1] = n.value();
        near_change = near_change || n.changed() != 0;
      }
    }
    T value = (*in).value();
    int changed = 0;
    if (near_change) {  // otherwise the same inputs as last time: no lower value
      const T solved =
          godunov_update(std::fmin(around[0][0], around[0][1]), std::fmin(around[1][0], around[1][1]), h);
      if (solved < value && solved <= limit) {
        value = solved;
        changed = 1;
      }
    }
    auto next = *out;
    next.value() = value;
    next.changed() = changed;
  }
};

// FNV-1a over the bytes of every cell's value, row by row.
template <class ValueAt>
std::uint64_t field_checksum(std::size_t nx, std::size_t ny, ValueAt value_at) {
  std::uint64_t hash = 1469598103934665603ull;
  for (std::size_t j = 0; j < ny; ++j) {
    for (std::size_t i = 0; i < nx; ++i) {
      const auto value = value_at(i, j);
      unsigned char bytes[sizeof value];
      std::memcpy(bytes, &value, sizeof value);
      for (unsigned char byte : bytes) hash = (hash ^ byte) * 1099511628211ull;
    }
  }
  return hash;
}

// The exact distance from the source's centre to cell (i, j)'s centre.
inline double exact_distance(const Problem& p, std::size_t i, std::size_t j) {
  const double dx = static_cast<double>(i) - static_cast<double>(p.sx());
  const double dy = static_cast<double>(j) - static_cast<double>(p.sy());
  return p.h() * std::sqrt(dx * dx + dy * dy);
}

// Errors against exact_distance over the cells that hold a value (the band):
// the largest and the mean (L1 per cell) absolute difference.
struct BandError {
  double max = 0.0, l1 = 0.0;
  std::size_t cells = 0;
};
template <class ValueAt>
BandError band_error(const Problem& p, ValueAt value_at) {
  BandError e;
  double sum = 0.0;
  for (std::size_t j = 0; j < p.ny; ++j) {
    for (std::size_t i = 0; i < p.nx; ++i) {
      const double v = static_cast<double>(value_at(i, j));
      if (!std::isfinite(v)) continue;
      const double error = std::fabs(v - exact_distance(p, i, j));
      e.max = std::fmax(e.max, error);
      sum += error;
      ++e.cells;
    }
  }
  e.l1 = e.cells > 0 ? sum / static_cast<double>(e.cells) : 0.0;
  return e;
}

// Throws std::invalid_argument naming the field when the problem makes no sense.
inline void check_problem(const Problem& p) {
  if (p.nx == 0 || p.ny == 0) throw std::invalid_argument("eikonal: the grid needs at least one cell");
  if (p.partitions == 0 || p.ny < p.partitions)
    throw std::invalid_argument("eikonal: " + std::to_string(p.ny) + " rows cannot be split into " +
                                std::to_string(p.partitions) + " partitions");
  if (p.band == 0) throw std::invalid_argument("eikonal: the band needs at least 1 cell");
  if (p.sx() >= p.nx || p.sy() >= p.ny)
    throw std::invalid_argument("eikonal: the source (" + std::to_string(p.sx()) + ", " +
                                std::to_string(p.sy()) + ") lies outside the " + std::to_string(p.nx) + "x" +
                                std::to_string(p.ny) + " grid");
}

template <class T, class Layout>
class Solver {
 public:
  using Field = Tensor<Cell<T, Layout>, 2>;

  explicit Solver(const Problem& p)
      : problem_((check_problem(p), p)),
        a_({1, p.partitions}, {1, 1}, 1, p.nx, p.ny),
        b_({1, p.partitions}, {1, 1}, 1, p.nx, p.ny),
        changed_ab_(make_reduction_result<std::int64_t>(0)),
        changed_ba_(make_reduction_result<std::int64_t>(0)),
        counts_(std::make_shared<Counts>()) {
    for (std::size_t j = 0; j < p.ny; ++j) {
      for (std::size_t i = 0; i < p.nx; ++i) {
        const bool source = i == p.sx() && j == p.sy();
        a_(i, j).value() = source ? T(0) : std::numeric_limits<T>::infinity();
        a_(i, j).changed() = source ? 1 : 0;  // the source starts the active list
      }
    }
    build_graph();
  }
  Solver(const Solver&) = delete;  // the graph refers to its fields
  Solver& operator=(const Solver&) = delete;

  // Runs passes until one changes no cell; returns the passes that did
  // (again: one pass, which changes nothing).
  long run(Executor& executor) {
    *counts_ = Counts{};
    executor.run(graph_).get();
    return counts_->changing_passes;
  }

  T distance(std::size_t i, std::size_t j) const { return a_(i, j).value(); }
  long changing_passes() const noexcept { return counts_->changing_passes; }
  long passes() const noexcept { return counts_->passes; }
  const Graph& graph() const noexcept { return graph_; }
  std::uint64_t checksum() const {
    return field_checksum(problem_.nx, problem_.ny,
                          [this](std::size_t i, std::size_t j) { return distance(i, j); });
  }

 private:
  struct Counts {
    long passes = 0, changing_passes = 0;
    bool converged = false;
  };

  // One run of the graph is two passes (a -> b, b -> a), each followed by
  // the count of cells it changed; the graph repeats while the second changed any.
  void build_graph() {
    const T h = static_cast<T>(problem_.h());
    const T limit = static_cast<T>(static_cast<double>(problem_.band) * problem_.h());
    graph_.split(UpdateCell<T>{}, concurrent_padded_access(a_), b_, h, limit).named("pass_ab");
    graph_.then_reduce(b_, changed_ab_, SumReducer()).named("changed_ab");
    graph_.then_split(UpdateCell<T>{}, concurrent_padded_access(b_), a_, h, limit).named("pass_ba");
    graph_.then_reduce(a_, changed_ba_, SumReducer()).named("changed_ba");
    auto ab = changed_ab_, ba = changed_ba_;
    auto counts = counts_;
    graph_
        .then([ab, ba, counts]() mutable {
          for (const std::int64_t changed : {ab.value_and_reset(), ba.value_and_reset()}) {
            if (counts->converged) break;  // a pass after one that changed nothing is not counted
            ++counts->passes;
            if (changed == 0)
              counts->converged = true;
            else
              ++counts->changing_passes;
          }
        })
        .named("count");
    graph_.conditional([counts] { return !counts->converged; }).named("again?");
  }

  Problem problem_;
  Field a_, b_;
  ReductionResult<std::int64_t> changed_ab_, changed_ba_;
  std::shared_ptr<Counts> counts_;
  Graph graph_;
};

}  // namespace weft::eikonal
