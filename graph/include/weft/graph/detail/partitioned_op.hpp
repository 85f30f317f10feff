// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// What a tensor operation (split, then_split, reduce, then_reduce) hands to
// the Graph: one callable per block and, for each tensor it touches, how that
// tensor is split and how its padding is filled. Templates gather this; the
// Graph (tensor_edges.cpp) wires nodes and edges from it without knowing types.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <weft/graph/gpu_node.hpp>
#include <weft/graph/node_kind.hpp>
#include <weft/graph/node_work.hpp>
#include <weft/graph/tensor_access.hpp>
#include <weft/runtime/rank_group.hpp>
#include <weft/views/block_kernel.hpp>
#include <weft/views/gpu_kernel.hpp>

namespace weft::detail {

struct TensorUse {
  const void* id = nullptr;  // the tensor's shared blocks
  PaddedAccess access = PaddedAccess::None;
  std::size_t blocks = 0;
  std::vector<std::size_t> shape;  // every block's extents, in block order
  std::string description;         // for errors: "Tensor<2> (64, 64) in 4 blocks"
  std::vector<int> devices;        // device of each block (the CUDA device for GPU memory)
  bool gpu_memory = false;         // blocks in GPU memory (Tensor made with cuda_memory)
  std::size_t padding = 0;
  // Identifies how the tensor is split (blocks, their extents and devices):
  // nodes of two operations work on the same data per block only if equal.
  std::uint64_t split_signature = 0;
  std::function<std::vector<std::size_t>(std::size_t)> padding_sources;  // blocks feeding a block's padding
  std::function<void(std::size_t from, std::size_t to)> copy_padding;
  // GPU memory: queues the same copy on a stream instead.
  std::function<void(std::size_t from, std::size_t to, GpuStream stream)> copy_padding_on_stream;
  // Distributed tensors (distribution.hpp): the rank owning each block
  // (empty when not distributed), the group, and padding between ranks as
  // packed bytes (Tensor::padding_bytes, pack_padding, unpack_padding).
  std::vector<int> owners;
  std::shared_ptr<RankGroup> group;
  std::function<std::size_t(std::size_t from, std::size_t to)> padding_bytes;
  std::function<void(std::size_t from, std::size_t to, void* out)> pack_padding;
  std::function<void(std::size_t from, std::size_t to, const void* in)> unpack_padding;
};

// Where a reduction leaves block b's partial, as bytes that can travel
// between ranks (null data: the result type cannot, not trivially copyable).
struct PartialSlot {
  void* data = nullptr;
  std::size_t bytes = 0;
};

// The graph's record of who uses tensors' padding (Ripple section 5.4),
// keyed by a tensor's id and a block.
struct PaddingLedger {
  using Key = std::pair<const void*, std::size_t>;
  // Padding copies that read the block and that no later node on the block
  // waits for yet: the next node writing the block must wait for them.
  std::map<Key, std::vector<std::int32_t>> readers;
  // Nodes that write or read the block's padding (its copies in, padded
  // kernels on it), which a new copy into that padding must follow.
  std::map<Key, std::vector<std::int32_t>> users;
};

struct PartitionedOp {
  const char* operation = "split";    // for errors
  std::vector<NodeWork> works;        // one per block (host kernels)
  std::vector<StreamWork> gpu_works;  // or one per block (weft::cuda::kernel: GPU nodes)
  std::vector<TensorUse> tensors;     // the first one decides the blocks and devices
  NodeKind kind = NodeKind::Compute;  // of the per-block nodes
  NodeWork finish;                    // reductions: the finishing node after every block's node
  std::function<PartialSlot(std::size_t block)> partial;  // reductions: block b's partial
  // Host kernels with skip_block (views/block_kernel.hpp): whether the
  // kernel leaves block b alone, so that copies into its padding can wait.
  std::function<bool(std::size_t block)> skips_block;
  // Host kernels with skip_padding_copy: whether the copy from `from` into
  // `to`'s padding is needless this time.
  std::function<bool(std::size_t from, std::size_t to)> skips_padding_copy;
};

template <class T, std::size_t D>
TensorUse describe_use(const Tensor<T, D>& tensor, PaddedAccess access) {
  TensorUse use;
  use.id = tensor.id();
  use.access = access;
  use.blocks = tensor.block_count();
  for (std::size_t b = 0; b < use.blocks; ++b) {
    const Extents<D>& e = tensor.block_space(b).extent;
    use.shape.insert(use.shape.end(), e.begin(), e.end());
    use.devices.push_back(tensor.in_gpu_memory() ? tensor.cuda_device_of(b)
                                                 : static_cast<int>(tensor.device_of(b)));
  }
  use.gpu_memory = tensor.in_gpu_memory();
  use.padding = tensor.padding();
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a over the shape and the devices
  const auto mix = [&h](std::uint64_t v) {
    for (int k = 0; k < 8; ++k, v >>= 8) h = (h ^ (v & 0xff)) * 1099511628211ull;
  };
  mix(D);
  for (std::size_t v : use.shape) mix(v);
  for (int v : use.devices) mix(static_cast<std::uint64_t>(v));
  if (tensor.is_distributed()) {
    use.group = tensor.rank_group();
    for (std::size_t b = 0; b < use.blocks; ++b) use.owners.push_back(tensor.owner_of(b));
    for (int v : use.owners) mix(static_cast<std::uint64_t>(v) + 0x9e3779b9u);
  }
  use.split_signature = h == 0 ? 1 : h;
  use.description = "Tensor<" + std::to_string(D) + "> " + detail::format_extents(tensor.geometry().sizes()) +
                    " in " + std::to_string(use.blocks) + " blocks";
  if (access != PaddedAccess::None && tensor.padding() > 0) {
    use.padding_sources = [tensor](std::size_t b) { return tensor.padding_sources(b); };
    use.copy_padding = [tensor](std::size_t from, std::size_t to) { tensor.copy_padding(from, to); };
    if (tensor.is_distributed()) {
      use.padding_bytes = [tensor](std::size_t from, std::size_t to) {
        return tensor.padding_bytes(from, to);
      };
      use.pack_padding = [tensor](std::size_t from, std::size_t to, void* out) {
        tensor.pack_padding(from, to, out);
      };
      use.unpack_padding = [tensor](std::size_t from, std::size_t to, const void* in) {
        tensor.unpack_padding(from, to, in);
      };
    }
    if (use.gpu_memory) {
      use.copy_padding_on_stream = [tensor](std::size_t from, std::size_t to, GpuStream s) {
        tensor.copy_padding(from, to, s.stream, s.device);
      };
    }
  }
  return use;
}

template <class Arg>
void collect_use(std::vector<TensorUse>& uses, const Arg& arg) {
  if constexpr (is_tensor_access_v<Arg>) {
    uses.push_back(describe_use(arg.tensor, arg.access));
  } else if constexpr (is_tensor_v<Arg>) {
    uses.push_back(describe_use(arg, PaddedAccess::None));
  }
}

}  // namespace weft::detail
