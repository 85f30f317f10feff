// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The memory layer: the superblock MemoryPool<Space> (and its device-usable
// MemoryPoolHandle) and the MultiarchAllocator with its linear arenas.
#pragma once

#include <weft/backends/backends.hpp>
#include <weft/memory/linear_arena.hpp>
#include <weft/memory/memory_pool.hpp>
#include <weft/memory/memory_pool_handle.hpp>
#include <weft/memory/memory_pool_statistics.hpp>
#include <weft/memory/multiarch_allocator.hpp>
