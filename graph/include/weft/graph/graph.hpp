// The graph layer: the Ripple-style Graph builder (emplace, then, split,
// reduce, sync, conditional), lowering onto the runtime's DAGs, JSON and DOT.
// It sits on the views layer; its contents arrive with the Graph issue.
#pragma once

#include <weft/views/views.hpp>
