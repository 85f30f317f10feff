// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// WEFT_HOST_DEVICE marks a function or lambda that runs on the host and, when
// compiled by nvcc, on the GPU too: one kernel source for both backends.
//
//   struct Saxpy {
//     WEFT_HOST_DEVICE void operator()(int i) const { y[i] += a * x[i]; }
//   };
#pragma once

#if defined(__CUDACC__)
#define WEFT_HOST_DEVICE __host__ __device__
#else
#define WEFT_HOST_DEVICE
#endif
