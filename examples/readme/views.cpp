#include <weft/weft.hpp>

#include <cstdio>

int main() {
  weft::Executor executor;
  const int n = 8, m = 4;
  weft::View<double**[3]> a("a", n, m), b("b", n, m);    // runtime and compile-time extents, LayoutRight
  auto row = weft::subview(a, 2, weft::ALL, weft::ALL);  // a(2, :, :), a View<double*[3]>
  row(1, 0) = 5.0;
  weft::deep_copy(b, a);  // any layouts, any spaces; shapes must match
  weft::View<double*> x("x", n), y("y", n);
  for (int i = 0; i < n; ++i) x(i) = i;
  const double s = 2.0;
  weft::parallel_for(weft::RangePolicy(executor, 0, n), [=](int i) { y(i) += s * x(i); });
  std::printf("b(2, 1, 0) = %g, y(7) = %g\n", b(2, 1, 0), y(7));  // prints: b(2, 1, 0) = 5, y(7) = 14

  weft::Tensor<double, 1> u({4}, 1, 64), du({4}, 64);  // 4 partitions, 1 cell of padding on u
  for (int i = 0; i < 64; ++i) u(i) = i * i;
  auto max_du = weft::make_reduction_result<double>(0.0);
  weft::Graph g;
  g.split([](auto& in, auto& out) { *out = *in.offset(weft::dim_x, 1) - *in.offset(weft::dim_x, -1); },
          weft::concurrent_padded_access(u), du)     // padding copies, then one node per partition
      .then_reduce(du, max_du, weft::MaxReducer());  // Ripple Listings 8 and 10
  executor.run(g).get();
  std::printf("max du = %g\n", max_du.value());  // prints: max du = 248 (4i at i = 62)
}
