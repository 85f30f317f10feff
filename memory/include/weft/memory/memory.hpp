// The memory layer: superblock MemoryPool<Space> and MultiarchAllocator.
#pragma once

#include <weft/backends/backends.hpp>
