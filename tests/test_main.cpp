// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The one doctest main every weft suite links.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
