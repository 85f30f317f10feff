#include <weft/weft.hpp>

#include <cstdio>

int main() {
  int i = 0;
  weft::Graph g;
  g.emplace([&] { i = 0; }).named("init");
  g.then([&] { ++i; }).named("body");
  g.branch([&] { return i < 5 ? 0 : 1; }).named("while");  // returns the successor to run
  g.add_edge("while", "body");                             // choice 0: loop
  g.then([&] { std::printf("done: i = %d\n", i); });       // choice 1
  weft::Executor executor;
  executor.run(g).get();  // prints: done: i = 5
}
