// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// WEFT_INITIAL_EXEC_TLS gives a thread_local variable the initial-exec TLS
// model. Why: weft's libraries are built position-independent, and there
// the default model makes every access a __tls_get_addr call, which the
// compiler must treat as clobbering registers even where the linker later
// rewrites it into a plain %fs access. The task-DAG reads its thread-local
// state several times per task: the default model cost 10% of naive fib's
// time. An initial-exec access is one GOT load and a %fs access. The cost:
// a shared library holding weft can no longer be dlopen()ed once the
// process's static TLS space is used up.
//
// Left out (the models can be mixed: the variable is in static TLS either
// way):
//   - for nvcc's front end, which rejects the attribute on thread_local
//     variables;
//   - under AddressSanitizer and ThreadSanitizer: GCC reads the flags of
//     the "add x@gottpoff(%rip)" that makes such an address, for the null
//     check UBSan adds (CI builds it with ASan), and the linker rewrites
//     that add into a lea, which sets no flags, so the check fires at
//     random. weft's own code reads these variables directly, never through
//     a reference, which UBSan would check.
#pragma once

#if defined(__CUDACC__) || defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define WEFT_INITIAL_EXEC_TLS
#else
#define WEFT_INITIAL_EXEC_TLS [[gnu::tls_model("initial-exec")]]
#endif
