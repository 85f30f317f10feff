// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
#include <weft/graph/detail/callable_store.hpp>

#include <algorithm>

namespace weft::detail {

void* CallableStore::allocate_in_new_chunk(std::size_t size, std::size_t align) {
  // A large state gets a chunk of its own, leaving the current one's free
  // space for the next small ones.
  const bool large = size + align > kChunk / 4;
  auto chunk = std::make_shared<CallableChunk>(large ? size + align : kChunk);
  chunks_.push_back(chunk);
  std::byte* first = chunk->begin();
  const std::size_t pad = (align - reinterpret_cast<std::uintptr_t>(first) % align) % align;
  std::byte* slot = first + pad;
  last_ = chunk.get();
  if (large) return slot;
  current_ = chunk.get();
  next_ = slot + size;
  end_ = chunk->end();
  return slot;
}

WorkGraphNodeCall CallableStore::adopt(NodeWork work) {
  if (!work) return {};
  const NodeWork::Ops* ops = work.ops_;
  void* slot = allocate(ops->size, ops->align);
  ops->move_to(work.state_.get(), slot);
  last_->destroy_later(ops->destroy, slot);
  return ops->choose != nullptr ? WorkGraphNodeCall::condition(ops->choose, slot)
                                : WorkGraphNodeCall::of(ops->call, slot);
}

void CallableStore::share(const CallableStore& other) {
  if (&other == this) return;
  for (const auto& chunk : other.chunks_) {
    if (std::find(chunks_.begin(), chunks_.end(), chunk) == chunks_.end()) chunks_.push_back(chunk);
  }
}

}  // namespace weft::detail
