// The views layer: View, layouts, subview, deep_copy, polymorphic struct
// layouts, partitioned Tensors and parallel_for / parallel_reduce. It sits on
// the runtime layer; its contents arrive with the Views issue.
#pragma once

#include <weft/runtime/runtime.hpp>
