// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Default options for sanitized builds, compiled into every test and example
// so that running a binary directly behaves as it does under ctest.
//
// The TSan suppressions cover third-party code:
//   - Boost.Lockfree's node free list reads a node's tagged `next` pointer
//     speculatively while another thread may be recycling that node; the
//     read is validated by a tagged compare-and-swap and discarded on a
//     mismatch. The plain write on the recycling side is what TSan reports.
//     The race is by design in Boost and involves none of weft's data: jobs
//     handed through the queue are published by its atomic head/tail
//     operations, which TSan does check.
//   - An exception object shared through std::exception_ptr (a node's
//     exception, rethrown by the run's future on another thread) is freed
//     by whichever thread drops the last reference. libstdc++ counts those
//     references atomically, but in code TSan does not instrument, so it
//     cannot see that the free comes after every other owner is done, and
//     reports the free of the object (or of its message) against the
//     handler that read it.
// LeakSanitizer: Open MPI's own allocations (below).
//   - Open MPI (the mpi layer's tests): its own locks and threads, not
//     instrumented; TSan reports a lock-order inversion inside its TCP
//     transport at MPI_Init. weft's side of MPI is one thread (the
//     session's progress thread), whose hand-offs TSan does check.
extern "C" {

const char* __tsan_default_options() { return "halt_on_error=1 second_deadlock_stack=1"; }

const char* __tsan_default_suppressions() {
  return "race:boost::lockfree::detail::freelist_stack\n"
         "race:boost::lockfree::detail::tagged_ptr\n"
         "race:boost::lockfree::queue\n"
         "race:__cxa_free_exception\n"
         "race:exception_ptr::_M_release\n"
         "race:std::logic_error::~logic_error\n"
         "race:std::runtime_error::~runtime_error\n"
         "deadlock:mca_btl_tcp_\n"
         "race:libopen-pal.so\n"
         "race:libmpi.so\n";
}

const char* __asan_default_options() { return "detect_leaks=1 abort_on_error=1"; }

// Open MPI keeps allocations of its own until exit (its plug-ins, set-up
// strings); tests/mpi keeps its plug-ins loaded and unwinds slowly (see its
// CMakeLists.txt) so that these name them.
const char* __lsan_default_suppressions() {
  return "leak:libmpi.so\n"
         "leak:libopen-pal.so\n"
         "leak:libopen-rte.so\n"
         "leak:libpmix.so\n"
         "leak:libhwloc.so\n"
         "leak:libevent\n"
         "leak:mca_\n";
}

const char* __ubsan_default_options() { return "halt_on_error=1 print_stacktrace=1"; }
}
