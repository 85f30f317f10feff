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
// nvcc's front end rejects the attribute on thread_local variables, so
// CUDA translation units access the same variables with the default model
// (the models can be mixed: the variable is in static TLS either way).
#pragma once

#if defined(__CUDACC__)
#define WEFT_INITIAL_EXEC_TLS
#else
#define WEFT_INITIAL_EXEC_TLS [[gnu::tls_model("initial-exec")]]
#endif
