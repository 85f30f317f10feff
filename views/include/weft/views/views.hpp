// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The views layer: View, layouts, subview, deep_copy, mirrors; polymorphic
// struct layouts; partitioned Tensors with iterators, padding exchange and
// boundary loaders; execution policies, parallel_for / parallel_reduce,
// reducers and ReductionResult. It sits on the runtime layer.
#pragma once

#include <weft/runtime/runtime.hpp>

// Views (Kokkos)
#include <weft/views/deep_copy.hpp>
#include <weft/views/layout.hpp>
#include <weft/views/mirror.hpp>
#include <weft/views/subview.hpp>
#include <weft/views/view.hpp>

// Polymorphic struct layouts (Ripple 4.2, 4.3)
#include <weft/views/accessor.hpp>
#include <weft/views/element_array.hpp>
#include <weft/views/element_storage.hpp>
#include <weft/views/polymorphic_layout.hpp>
#include <weft/views/read_only.hpp>
#include <weft/views/storage_descriptor.hpp>
#include <weft/views/vector.hpp>

// Tensors (Ripple 4.1, 5.2)
#include <weft/views/block_kernel.hpp>
#include <weft/views/boundary_loader.hpp>
#include <weft/views/tensor.hpp>
#include <weft/views/tensor_iterator.hpp>
#include <weft/views/unrolled_for.hpp>

// Data-parallel execution
#include <weft/views/current_executor.hpp>
#include <weft/views/parallel_for.hpp>
#include <weft/views/parallel_reduce.hpp>
#include <weft/views/range_policy.hpp>
#include <weft/views/reducers.hpp>
#include <weft/views/reduction_result.hpp>
