// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// The templates behind Graph::split, boundary and reduce: they turn a kernel
// and its tensor arguments into a PartitionedOp (one callable per block plus
// what the graph needs to know about each tensor), which the Graph wires into
// nodes and edges without knowing types (tensor_edges.cpp). Internal.
#pragma once

#include <cstddef>
#include <memory>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <weft/backends/memory_space.hpp>
#include <weft/graph/detail/partitioned_op.hpp>
#include <weft/graph/gpu_node.hpp>
#include <weft/graph/node_work.hpp>
#include <weft/graph/tensor_access.hpp>
#include <weft/views/block_kernel.hpp>
#include <weft/views/boundary_loader.hpp>
#include <weft/views/gpu_kernel.hpp>
#include <weft/views/reduction_result.hpp>
#include <weft/views/tensor.hpp>
#if defined(__CUDACC__)
#include <weft/views/cuda/block_ops_cuda.cuh>  // GPU boundary and reduce in .cu files
#endif

namespace weft::detail {

// Whether this translation unit is compiled by nvcc: the boundary and reduce
// operations made here can then also run over tensors in GPU memory. It is a
// template argument of those operations, so that the GPU-capable versions
// are distinct functions from the host-only ones other files make.
#if defined(__CUDACC__)
inline constexpr bool compiling_cuda = true;
#else
inline constexpr bool compiling_cuda = false;
#endif

// The bits of a weft::cuda::kernel's arguments that are staged in shared
// memory (*_in_shared), and of those the ones copied back.
template <class State>
cuda::SharedStaging shared_staging(const State& state) {
  cuda::SharedStaging staging;
  std::uint32_t bit = 1;
  const auto note = [&](const auto& arg) {
    if constexpr (is_tensor_access_v<decltype(arg)>) {
      if (arg.in_shared) {
        staging.stage |= bit;
        if (arg.access != PaddedAccess::Concurrent) staging.write_back |= bit;
      }
    }
    bit <<= 1;
  };
  std::apply([&](const auto&, const auto&... a) { (note(a), ...); }, state);
  return staging;
}

template <class F, class... Args>
PartitionedOp make_split(F&& kernel, Args&&... args) {
  static_assert(((is_tensor_v<Args> || is_tensor_access_v<Args>) || ...),
                "split() needs at least one Tensor argument (or a Tensor in a padded-access modifier)");
  PartitionedOp op;
  (collect_use(op.tensors, args), ...);
  using State = std::tuple<std::decay_t<F>, std::decay_t<Args>...>;
  auto state = std::make_shared<State>(std::forward<F>(kernel), std::forward<Args>(args)...);
  const std::size_t blocks = op.tensors.front().blocks;
  if constexpr (is_gpu_kernel_v<std::decay_t<F>>) {
    // weft::cuda::kernel: each block's node launches it on its device. The
    // *_in_shared arguments are staged in shared memory, and copied back
    // unless the kernel only reads them (concurrent_padded_access).
    const cuda::SharedStaging staging = shared_staging(*state);
    for (std::size_t b = 0; b < blocks; ++b) {
      op.gpu_works.push_back(StreamWork::make(
          [state, staging](GpuStream s, std::size_t block) {
            std::apply([&](auto& k, auto&... a) { k.launch(s.stream, block, staging, unwrap_tensor(a)...); },
                       *state);
          },
          b));
    }
  } else {
    // In-place kernels (exclusive_padded_access) read neighbours they also
    // write: their rows run in order on one thread, as the serial meaning says.
    bool in_place = false;
    for (const TensorUse& use : op.tensors) in_place = in_place || use.access == PaddedAccess::Exclusive;
    for (std::size_t b = 0; b < blocks; ++b) {
      op.works.push_back(NodeWork::make(
          [state, in_place](std::size_t block) {
            std::apply(
                [block, in_place](auto& f, auto&... a) {
                  if (in_place) {
                    run_block_kernel(block, f, unwrap_tensor(a)...);
                  } else {
                    run_block_kernel_shared(block, f, unwrap_tensor(a)...);
                  }
                },
                *state);
          },
          b));
    }
    using Kernel = std::decay_t<F>;
    if constexpr (block_skipping_kernel<Kernel, std::remove_cvref_t<decltype(unwrap_tensor(
                                                    std::declval<std::decay_t<Args>&>()))>...>) {
      // A block the kernel skips reads no padding: its copies in can wait.
      op.skips_block = [state](std::size_t block) {
        return std::apply(
            [block](auto& f, auto&... a) { return kernel_skips_block(f, block, unwrap_tensor(a)...); },
            *state);
      };
    }
    if constexpr (padding_copy_skipping_kernel<Kernel, std::remove_cvref_t<decltype(unwrap_tensor(
                                                           std::declval<std::decay_t<Args>&>()))>...>) {
      op.skips_padding_copy = [state](std::size_t from, std::size_t to) {
        return std::apply(
            [from, to](auto& f, auto&... a) { return f.skip_padding_copy(from, to, unwrap_tensor(a)...); },
            *state);
      };
    }
  }
  return op;
}

template <bool Cuda, class T, std::size_t D, class Loader>
PartitionedOp make_boundary(const Tensor<T, D>& tensor, Loader loader) {
  PartitionedOp op;
  op.operation = "boundary";
  op.tensors.push_back(describe_use(tensor, PaddedAccess::None));
  for (std::size_t b = 0; b < tensor.block_count(); ++b) {
    op.works.push_back(NodeWork::make(
        [tensor, loader](std::size_t block) { load_block_boundary(tensor, block, loader); }, b));
  }
#if defined(__CUDACC__)
  if constexpr (Cuda) {
    if (tensor.in_gpu_memory()) {
      for (std::size_t b = 0; b < tensor.block_count(); ++b) {
        op.gpu_works.push_back(StreamWork::make(
            [tensor, loader](GpuStream s, std::size_t block) {
              cuda::launch_block_boundary(s.stream, tensor, block, loader);
            },
            b));
      }
    }
  }
#endif
  return op;
}

template <bool Cuda, class T, std::size_t D, class R, class Reducer, class Map = CellItself>
PartitionedOp make_reduce(const Tensor<T, D>& tensor, ReductionResult<R>& result, const Reducer& reducer,
                          const Map& map = {}) {
  static_assert(
      std::is_invocable_v<const Map&, decltype(*std::declval<typename Tensor<T, D>::Iterator&>())>,
      "Graph::reduce: the map must take a cell, as *it gives it (a copy, or a const reference), and "
      "return the value to fold");
  PartitionedOp op;
  op.operation = "reduce";
  op.kind = NodeKind::Reduce;
  op.tensors.push_back(describe_use(tensor, PaddedAccess::None));
  const std::size_t blocks = tensor.block_count();
  // This operation's own partial per block: the result only receives the
  // total, so it can serve several operations and graphs.
  auto partials = std::make_shared<std::vector<CacheAligned<R>>>(blocks);
  for (std::size_t b = 0; b < blocks; ++b) {
    op.works.push_back(NodeWork::make(
        [tensor, partials, reducer, map](std::size_t block) {
          const auto fold_rows = [&](std::size_t first, std::size_t last, R& into) {
            reducer.init(into);
            auto fold = [&](auto& it) { reducer.join(into, static_cast<R>(map(*it))); };
            run_block_rows(block, first, last, fold, tensor);
          };
          const BlockRowChunks plan = block_row_chunks(block, tensor);
          R partial;
          if (!plan.worth_sharing()) {
            fold_rows(0, plan.rows(), partial);  // small: one loop, on any executor
          } else {
            // A partial per chunk of rows, the chunks shared with idle
            // workers and joined in order: a plan fixed by the block's
            // shape, so the same total on any executor. (Cache-line slots:
            // chunks on different workers write their own; and never a
            // packed std::vector<bool>.)
            std::vector<CacheAligned<R>> chunk_partials(plan.count());
            for_each_row_chunk(plan, [&](std::size_t c) {
              fold_rows(plan.first_row(c), plan.last_row(c), chunk_partials[c].value);
            });
            reducer.init(partial);
            for (const auto& chunk : chunk_partials) reducer.join(partial, chunk.value);
          }
          (*partials)[block].value = partial;
        },
        b));
  }
  op.finish = NodeWork::make([result, partials, reducer]() mutable {
    R total = result.initial_value();
    for (const auto& slot : *partials) reducer.join(total, slot.value);
    result.publish(std::move(total));
  });
  if constexpr (std::is_trivially_copyable_v<R>) {
    // A distributed tensor's partials travel to every rank, which joins
    // them in block order: the same total whatever the number of ranks.
    op.partial = [partials](std::size_t block) { return PartialSlot{&(*partials)[block].value, sizeof(R)}; };
  }
#if defined(__CUDACC__)
  if constexpr (Cuda) {
    if (tensor.in_gpu_memory()) {
      // Each block's GPU node leaves its partial in page-locked memory; the
      // finishing node (on the host, after the GPU work) joins them.
      const HostPinnedSpace pinned_space;
      const std::size_t bytes = blocks * sizeof(R);
      std::shared_ptr<R> pinned(static_cast<R*>(pinned_space.allocate(bytes)),
                                [pinned_space, bytes](R* p) { pinned_space.deallocate(p, bytes); });
      for (std::size_t b = 0; b < blocks; ++b) {
        op.gpu_works.push_back(StreamWork::make(
            [tensor, reducer, map, pinned](GpuStream s, std::size_t block) {
              cuda::launch_block_reduce<R>(s.stream, tensor, block, reducer, pinned.get() + block, map);
            },
            b));
      }
      if constexpr (std::is_trivially_copyable_v<R>) {
        // Between ranks the partials travel from and to the page-locked slots.
        op.partial = [pinned](std::size_t block) { return PartialSlot{pinned.get() + block, sizeof(R)}; };
      }
      op.finish = NodeWork::make([result, pinned, blocks, reducer]() mutable {
        R total = result.initial_value();
        for (std::size_t b = 0; b < blocks; ++b) reducer.join(total, pinned.get()[b]);
        result.publish(std::move(total));
      });
    }
  }
#endif
  return op;
}

}  // namespace weft::detail
