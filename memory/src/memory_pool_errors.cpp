// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <weft/memory/memory_pool_handle.hpp>

#include <cstdio>
#include <stdexcept>
#include <string>

namespace weft {
namespace {

std::string pointer_text(const void* ptr) {
  char text[32];
  std::snprintf(text, sizeof text, "%p", ptr);
  return text;
}

}  // namespace

const char* to_string(DeallocateStatus status) noexcept {
  switch (status) {
    case DeallocateStatus::ok:
      return "ok";
    case DeallocateStatus::outside_pool:
      return "outside_pool";
    case DeallocateStatus::not_a_block:
      return "not_a_block";
    case DeallocateStatus::wrong_size:
      return "wrong_size";
    case DeallocateStatus::not_allocated:
      return "not_allocated";
  }
  return "unknown";
}

namespace detail {

void throw_bad_deallocate(DeallocateStatus status, const void* ptr, std::size_t size, std::size_t block_size,
                          const void* begin, const void* end) {
  std::string message =
      "MemoryPool::deallocate(" + pointer_text(ptr) + ", " + std::to_string(size) + "): nothing was freed: ";
  const std::string block = std::to_string(block_size) + "-byte block";
  switch (status) {
    case DeallocateStatus::outside_pool:
      message += "the pointer is not inside this pool, whose blocks span [" + pointer_text(begin) + ", " +
                 pointer_text(end) + "); expected a pointer this pool's allocate returned";
      break;
    case DeallocateStatus::not_a_block:
      message += block_size == 0
                     ? "the pointer is inside the pool but in a superblock that holds no blocks"
                     : "the pointer is inside the pool but not at the start of a block (blocks there are " +
                           std::to_string(block_size) + " bytes)";
      break;
    case DeallocateStatus::wrong_size:
      message += "the size does not fit the " + block +
                 " at that address; expected the size given to allocate (1 to " + std::to_string(block_size) +
                 " bytes)";
      break;
    case DeallocateStatus::not_allocated:
      message += "the " + block + " at that address is not allocated (freed twice, or never handed out)";
      break;
    case DeallocateStatus::ok:
      message += "no error (this report should not have been made)";
      break;
  }
  throw std::invalid_argument(message);
}

}  // namespace detail
}  // namespace weft
