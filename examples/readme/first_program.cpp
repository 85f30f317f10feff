#include <weft/weft.hpp>

#include <cstdio>
#include <vector>

int main() {
  weft::Crs<int> dag;          // row i: the items that run after i
  dag.row_map = {0, 1, 2, 2};  // 0 -> 2, 1 -> 2
  dag.entries = {2, 2};
  std::vector<int> v(3);
  weft::Executor executor;  // one worker per core by default
  weft::parallel_for(executor, weft::WorkGraphPolicy<int>(dag), [&](int i) {
    v[i] = i < 2 ? i + 1 : v[0] + v[1];  // item 2 sees items 0 and 1 done
  });
  std::printf("v = %d %d %d\n", v[0], v[1], v[2]);  // prints: v = 1 2 3
}
