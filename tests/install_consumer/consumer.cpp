// Runs a three-node work-DAG through an installed weft.
#include <weft/weft.hpp>

#include <cstdio>
#include <vector>

int main() {
  weft::Crs<int> dag;  // 0 -> 2, 1 -> 2
  dag.row_map = {0, 1, 2, 2};
  dag.entries = {2, 2};
  std::vector<int> value(3, 0);
  weft::Executor executor;
  weft::parallel_for(executor, weft::WorkGraphPolicy<int>(dag), [&](int i) {
    value[static_cast<std::size_t>(i)] = i < 2 ? i + 1 : value[0] + value[1];
  });
  std::printf("installed weft works: %d + %d = %d\n", value[0], value[1], value[2]);
  return value[2] == 3 ? 0 : 1;
}
