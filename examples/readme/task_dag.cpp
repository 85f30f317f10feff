#include <weft/weft.hpp>

#include <cstdio>
#include <stdexcept>

struct Fib {  // one task per call of fib(n)
  using value_type = long;
  weft::TaskScheduler sched;
  long n;
  weft::Future<long> fib[2] = {};

  void operator()(weft::TaskMember&, long& result) {
    if (n < 2) {
      result = n;
    } else if (!fib[0].is_null()) {  // second call: both inputs are done
      result = fib[0].get() + fib[1].get();
    } else {  // first call: spawn the inputs, then respawn to come back when both are done
      fib[0] = weft::task_spawn(weft::TaskSingle(sched, weft::TaskPriority::High), Fib{sched, n - 2});
      fib[1] = weft::task_spawn(weft::TaskSingle(sched), Fib{sched, n - 1});
      weft::Future<> both = sched.when_all(fib, 2);
      if (both.is_null()) throw std::runtime_error("Fib: the memory pool is full");
      weft::TaskScheduler::respawn(this, both, weft::TaskPriority::High);
    }
  }
};

int main() {
  weft::Executor executor;
  weft::MemoryPool<weft::HostSpace> pool(weft::HostSpace{}, 64 << 20);
  weft::TaskScheduler sched(executor, pool);
  weft::Future<long> f = weft::host_spawn(weft::TaskSingle(sched), Fib{sched, 25});
  weft::wait(sched);                      // every task, including those spawned by tasks
  long value = f.get();                   // rethrows the task's exception, if any
  std::printf("fib(25) = %ld\n", value);  // prints: fib(25) = 75025
}
