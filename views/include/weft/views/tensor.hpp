// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Tensor<T, D>: a D-dimensional array split into blocks that live on
// different devices (Ripple section 4.1), each block with padding around it.
//
//   weft::Tensor<double, 1> x({4}, 1000);              // 4 partitions of 250 cells
//   weft::Tensor<double, 2> t({2, 2}, {2, 2}, 1000, 1000);  // 2x2 devices, 2x2 blocks on each
//   weft::Tensor<double, 1> p({4}, 1, 1000);           // 1 cell of padding on each side
//   weft::Tensor<double, 2> u({1, 4}, {1, 2}, 2, nx, ny);   // split along y, 2 cells of padding
//
// Constructors: (partitions, [sub_partitions], [padding], sizes...): the
// number of trailing integers says whether padding is given (D + 1) or not
// (D). Blocks, devices and uneven splits are described in tensor_geometry.hpp.
//
// A Tensor is a shared handle: copies refer to the same blocks, and the last
// copy frees them (graph nodes keep copies, so a graph keeps its tensors).
// Sizes whose cells or bytes (padding included) overflow std::size_t throw
// AllocationError naming them, before any block is allocated; sizes that fit
// but exceed memory throw AllocationError from the allocation.
// Elements start zeroed. Element layout inside a block follows
// element_storage<T>: an array of T for plain types, struct-of-arrays or
// array-of-structs for polymorphic-layout types. By default every block is
// host memory and `device` is a virtual device number. Given weft::cuda_memory
// first, every block is GPU memory instead: partition p's blocks on CUDA
// device p % (CUDA devices used: CudaMemory::on_devices(n), or all present), so
// sub-partitions share a GPU:
//
//   weft::Tensor<float, 2> g(weft::cuda_memory, {1, 1}, {1, 4}, 1, nx, ny);  // 4 blocks on GPU 0
//   weft::deep_copy(host_twin, g);   // to a host tensor split the same way
//
// The host cannot touch such blocks: operator() refuses, deep_copy moves
// whole tensors, and graph operations over them run GPU kernels
// (weft::cuda::kernel, views/cuda/block_kernel_cuda.cuh) and queue padding
// copies on the devices' copy streams.
//
// Given a weft::Distribution first (distribution.hpp), the tensor is spread
// over the ranks of a RankGroup: each rank allocates only the blocks of the
// partitions it owns (is_local), and host-side access to another rank's
// blocks throws std::logic_error naming the owner. Graph operations run each
// block's nodes on its owner and turn padding copies between ranks into
// messages (docs/distributed.md):
//
//   weft::Tensor<double, 2> u(weft::distributed(ranks), {1, 8}, 1, nx, ny);
//
// Kernels see a block through iterators (tensor_iterator.hpp); graph
// operations (split, reduce, the padded-access modifiers) run them per block.
// Host-side helpers: operator() on global indices, padding exchange between
// neighbouring blocks, boundary loading at the tensor's edges.
#pragma once

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <weft/backends/cuda_devices.hpp>
#include <weft/backends/cuda_streams.hpp>
#include <weft/backends/detail/checked_size.hpp>
#include <weft/backends/memory_space.hpp>
#include <weft/views/detail/row_runs.hpp>
#include <weft/views/distribution.hpp>
#include <weft/views/element_storage.hpp>
#include <weft/views/layout.hpp>
#include <weft/views/tensor_geometry.hpp>
#include <weft/views/tensor_iterator.hpp>

namespace weft {

// Tag for the Tensor constructors: the blocks live in GPU memory, on the
// first `devices` CUDA devices (0: every device present):
// weft::cuda_memory, or weft::CudaMemory::on_devices(2).
struct CudaMemory {
  // No constructor from an int: a braced list meant as partitions ({2})
  // must never read as this.
  constexpr CudaMemory() = default;
  static constexpr CudaMemory on_devices(int n) {
    CudaMemory memory;
    memory.devices = n;
    return memory;
  }
  int devices = 0;
};
inline constexpr CudaMemory cuda_memory{};

template <class T, std::size_t D>
class Tensor {
 public:
  using value_type = T;
  using reference = typename element_storage<T>::reference;
  using Iterator = IndexedIterator<T, D>;
  static constexpr std::size_t dims = D;

  Tensor() = default;

  template <std::integral... Sizes>
  requires(sizeof...(Sizes) == D || sizeof...(Sizes) == D + 1)
      Tensor(const Extents<D>& partitions, Sizes... sizes)
      : Tensor(partitions, ones(), sizes...) {}

  template <std::integral... Sizes>
  requires(sizeof...(Sizes) == D || sizeof...(Sizes) == D + 1)
      Tensor(const Extents<D>& partitions, const Extents<D>& sub_partitions, Sizes... sizes)
      : impl_(
            std::make_shared<Impl>(make_geometry(partitions, sub_partitions, sizes...), false, 0, nullptr)) {}

  // Spread over the ranks of distribution.group (see above); throws
  // std::invalid_argument for an owner map that does not fit.
  template <std::integral... Sizes>
  requires(sizeof...(Sizes) == D || sizeof...(Sizes) == D + 1)
      Tensor(const Distribution& distribution, const Extents<D>& partitions, Sizes... sizes)
      : Tensor(distribution, partitions, ones(), sizes...) {}
  template <std::integral... Sizes>
  requires(sizeof...(Sizes) == D || sizeof...(Sizes) == D + 1)
      Tensor(const Distribution& distribution, const Extents<D>& partitions, const Extents<D>& sub_partitions,
             Sizes... sizes)
      : impl_(std::make_shared<Impl>(make_geometry(partitions, sub_partitions, sizes...), false, 0,
                                     &distribution)) {}

  // The same with every block in GPU memory (see above). Throws
  // std::runtime_error when no CUDA device is usable, saying why.
  template <std::integral... Sizes>
  requires(sizeof...(Sizes) == D || sizeof...(Sizes) == D + 1)
      Tensor(CudaMemory memory, const Extents<D>& partitions, Sizes... sizes)
      : Tensor(memory, partitions, ones(), sizes...) {}
  template <std::integral... Sizes>
  requires(sizeof...(Sizes) == D || sizeof...(Sizes) == D + 1)
      Tensor(CudaMemory memory, const Extents<D>& partitions, const Extents<D>& sub_partitions,
             Sizes... sizes)
      : impl_(std::make_shared<Impl>(make_geometry(partitions, sub_partitions, sizes...), true,
                                     memory.devices, nullptr)) {}

  // Spread over ranks with each rank's blocks in GPU memory: all on the GPU
  // local_rank() % devices (RankGroup::local_rank, devices: what `memory`
  // asks for, else every device present). Padding between ranks is staged
  // through page-locked host memory.
  template <std::integral... Sizes>
  requires(sizeof...(Sizes) == D || sizeof...(Sizes) == D + 1)
      Tensor(const Distribution& distribution, CudaMemory memory, const Extents<D>& partitions,
             Sizes... sizes)
      : Tensor(distribution, memory, partitions, ones(), sizes...) {}
  template <std::integral... Sizes>
  requires(sizeof...(Sizes) == D || sizeof...(Sizes) == D + 1)
      Tensor(const Distribution& distribution, CudaMemory memory, const Extents<D>& partitions,
             const Extents<D>& sub_partitions, Sizes... sizes)
      : impl_(std::make_shared<Impl>(make_geometry(partitions, sub_partitions, sizes...), true,
                                     memory.devices, &distribution)) {}

  bool empty() const noexcept { return impl_ == nullptr; }
  // Whether the blocks are GPU memory (made with cuda_memory).
  bool in_gpu_memory() const { return checked().gpu; }
  // The CUDA device holding a block (-1 for host memory).
  int cuda_device_of(std::size_t block) const { return checked().blocks[checked_block(block)].cuda_device; }
  const TensorGeometry<D>& geometry() const { return checked().geometry; }
  std::size_t size(std::size_t dim) const { return geometry().sizes().at(dim); }
  std::size_t padding() const { return geometry().padding(); }
  std::size_t block_count() const { return geometry().block_count(); }
  std::size_t device_count() const { return geometry().device_count(); }
  std::size_t device_of(std::size_t block) const { return geometry().device_of(checked_block(block)); }

  // Distribution (all true / 0 / null for a tensor that is not distributed).
  bool is_distributed() const { return checked().group != nullptr; }
  const std::shared_ptr<RankGroup>& rank_group() const { return checked().group; }
  int rank() const { return checked().rank; }  // this process's rank in the group
  // The rank that owns (allocates, computes) a block.
  int owner_of(std::size_t block) const {
    const Impl& impl = checked();
    return impl.owners.empty() ? impl.rank : impl.owners[geometry().device_of(checked_block(block))];
  }
  bool is_local(std::size_t block) const { return owner_of(block) == checked().rank; }

  // What kernels get: a block's buffer and shape, and its place in the tensor.
  const BlockSpace<D>& block_space(std::size_t block) const {
    return checked().blocks[checked_block(block)].space;
  }
  BlockPlace<D> block_place(std::size_t block) const {
    const TensorGeometry<D>& g = geometry();
    return BlockPlace<D>{g.block_origin(checked_block(block)), g.sizes(), g.block_coords(block)};
  }
  // An iterator on cell `local` of a block (interior coordinates; negative or
  // beyond the extent reaches into the padding, up to `padding` cells).
  Iterator iterator(std::size_t block, const std::array<std::ptrdiff_t, D>& local) const {
    require_local(block, "iterator");
    const BlockSpace<D>& s = block_space(block);
    std::size_t at = 0;
    for (std::size_t d = 0; d < D; ++d) {
      const std::ptrdiff_t p = static_cast<std::ptrdiff_t>(s.padding);
      if (local[d] < -p || local[d] >= static_cast<std::ptrdiff_t>(s.extent[d]) + p) {
        throw std::out_of_range("Tensor: block " + std::to_string(block) + " has no cell " +
                                std::to_string(local[d]) + " along dimension " + std::to_string(d) +
                                " (interior 0.." + std::to_string(s.extent[d]) + ", padding " +
                                std::to_string(s.padding) + ")");
      }
      at += static_cast<std::size_t>(local[d] + p) * s.stride[d];
    }
    return Iterator(s, block_place(block), at);
  }

  // The element at a global index (host side; every index is checked).
  template <std::integral... I>
  requires(sizeof...(I) == D) reference operator()(I... index) const {
    const std::array<long long, D> given{static_cast<long long>(index)...};
    const TensorGeometry<D>& g = geometry();
    Extents<D> global{};
    for (std::size_t d = 0; d < D; ++d) {
      if (given[d] < 0 || static_cast<std::size_t>(given[d]) >= g.sizes()[d]) {
        throw std::out_of_range("Tensor index " + detail::format_index_list(given) + " out of bounds " +
                                detail::format_extents(g.sizes()));
      }
      global[d] = static_cast<std::size_t>(given[d]);
    }
    const std::size_t block = g.block_holding(global);
    if (checked().gpu) {
      throw std::logic_error("Tensor: element " + detail::format_index_list(given) +
                             " is in GPU memory (CUDA device " + std::to_string(cuda_device_of(block)) +
                             "); deep_copy the tensor to a host tensor to read it");
    }
    if (!is_local(block)) {
      throw std::logic_error("Tensor: element " + detail::format_index_list(given) + " is in block " +
                             std::to_string(block) + ", which rank " + std::to_string(owner_of(block)) +
                             " owns; this is rank " + std::to_string(rank()));
    }
    const Extents<D> origin = g.block_origin(block);
    const BlockSpace<D>& s = block_space(block);
    Extents<D> local{};
    for (std::size_t d = 0; d < D; ++d) local[d] = global[d] - origin[d];
    return element_storage<T>::at(s.data, s.linear(local), s.count);
  }

  // Blocks whose interior overlaps `block`'s padding: where its padding comes from.
  std::vector<std::size_t> padding_sources(std::size_t block) const {
    std::vector<std::size_t> out;
    if (padding() == 0) return out;
    for (std::size_t other = 0; other < block_count(); ++other) {
      if (other != checked_block(block) && overlap(other, block).count > 0) out.push_back(other);
    }
    return out;
  }

  // Copies the cells of block `from` that lie in block `to`'s padding; for a
  // tensor in GPU memory through `to`'s device's compute stream, waiting for it.
  void copy_padding(std::size_t from, std::size_t to) const {
    require_local(from, "copy_padding");
    require_local(to, "copy_padding");
    if (!checked().gpu) {
      copy_padding_with(from, to, detail::HostMove2D{});
      return;
    }
    const int device = cuda_device_of(to);
    const CudaStream stream = shared_device_streams(device).compute_stream();
    copy_padding(from, to, stream, device);
    stream_ops::synchronize(stream, device);
  }
  // Padding between ranks (what a graph's cross-rank copy does): the bytes
  // of the cells of `from` in `to`'s padding, packed (element_storage
  // layout for that many elements); pack_padding fills them from `from`
  // (local), unpack_padding writes them into `to`'s padding (local).
  std::size_t padding_bytes(std::size_t from, std::size_t to) const {
    return element_storage<T>::bytes(overlap(checked_block(from), checked_block(to)).count);
  }
  // In GPU memory, `out` and `in` are host memory (pinned for speed): the
  // copies go through a copy stream of the block's device, and both return
  // once it is done (the caller makes sure the block's kernels are).
  void pack_padding(std::size_t from, std::size_t to, void* out) const {
    require_local(from, "pack_padding");
    const Overlap o = overlap(from, checked_block(to));
    const BlockSpace<D>& src = block_space(from);
    std::size_t at = 0;
    with_host_move(from, [&](const auto& move) {
      walk_row_runs(o, [&](const Index& first, std::size_t n, std::size_t rows) {
        element_storage<T>::copy_rows(out, at, n, o.count, src.data, offset_in(from, first),
                                      row_pitch(from, n), src.count, n, rows, move);
        at += n * rows;
      });
    });
  }
  void unpack_padding(std::size_t from, std::size_t to, const void* in) const {
    require_local(to, "unpack_padding");
    const Overlap o = overlap(checked_block(from), to);
    const BlockSpace<D>& dst = block_space(to);
    std::size_t at = 0;
    with_host_move(to, [&](const auto& move) {
      walk_row_runs(o, [&](const Index& first, std::size_t n, std::size_t rows) {
        element_storage<T>::copy_rows(dst.data, offset_in(to, first), row_pitch(to, n), dst.count, in, at, n,
                                      o.count, n, rows, move);
        at += n * rows;
      });
    });
  }

  // GPU memory only: queues the same copies on `stream` (of `device`) and
  // returns; what a graph's padding-copy node does.
  void copy_padding(std::size_t from, std::size_t to, CudaStream stream, int device) const {
    require_local(from, "copy_padding");
    require_local(to, "copy_padding");
    if (!checked().gpu) throw std::logic_error("Tensor::copy_padding: a stream is for tensors in GPU memory");
    copy_padding_with(from, to, stream_move(stream, device));
  }

 private:
  // A 2D mover (element_storage::copy_rows) that queues one
  // cudaMemcpy2DAsync on `stream` of `device` per call.
  static auto stream_move(CudaStream stream, int device) {
    return [stream, device](void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
                            std::size_t width, std::size_t rows) {
      stream_ops::copy_2d(dst, dst_pitch, src, src_pitch, width, rows, stream, device);
    };
  }
  // Calls f with how to move rows between host memory and `block`'s memory
  // (a 2D mover): memmove, or (GPU memory) 2D copies on a copy stream of its
  // device, waited for before returning.
  template <class F>
  void with_host_move(std::size_t block, const F& f) const {
    if (!checked().gpu) {
      f(detail::HostMove2D{});
      return;
    }
    const int device = cuda_device_of(block);
    const DeviceStreams& streams = shared_device_streams(device);
    const CudaStream stream =
        streams.copy_stream_count() > 0 ? streams.copy_stream(0) : streams.compute_stream();
    f(stream_move(stream, device));
    stream_ops::synchronize(stream, device);
  }

  // One copy_rows call per run of rows of the overlap: in GPU memory a 2D
  // halo along x is one cudaMemcpy2DAsync per component, not one per row.
  template <class Move2D>
  void copy_padding_with(std::size_t from, std::size_t to, const Move2D& move) const {
    const Overlap o = overlap(checked_block(from), checked_block(to));
    const BlockSpace<D>& src = block_space(from);
    const BlockSpace<D>& dst = block_space(to);
    walk_row_runs(o, [&](const Index& first, std::size_t n, std::size_t rows) {
      element_storage<T>::copy_rows(dst.data, offset_in(to, first), row_pitch(to, n), dst.count, src.data,
                                    offset_in(from, first), row_pitch(from, n), src.count, n, rows, move);
    });
  }

 public:
  // Fills every block's padding from its neighbours (host side, all at once;
  // graphs insert one copy node per pair instead).
  void exchange_padding() const {
    for (std::size_t to = 0; to < block_count(); ++to)
      for (std::size_t from : padding_sources(to)) copy_padding(from, to);
  }

  // Identity of the shared blocks (graphs track memory dependences by it).
  const void* id() const noexcept { return impl_.get(); }
  bool operator==(const Tensor& other) const noexcept { return impl_ == other.impl_; }

 private:
  struct Block {
    BlockSpace<D> space;
    std::size_t bytes = 0;
    int cuda_device = -1;  // GPU memory: the device holding it
  };
  struct Impl {
    Impl(const TensorGeometry<D>& g, bool in_gpu_memory, int devices_asked, const Distribution* distribution)
        : geometry(g), gpu(in_gpu_memory) {
      if (distribution != nullptr) {
        owners = detail::resolve_owners(*distribution, g.device_count());
        group = distribution->group;
        rank = group->rank();
      }
      std::vector<Block> planned = plan_blocks(g);  // throws for impossible sizes, before any allocation
      blocks.reserve(planned.size());
      int cuda_devices = 0;
      if (gpu) {
        const CudaDiscovery found = discover_cuda_devices();
        cuda_devices = static_cast<int>(found.devices.size());
        if (cuda_devices == 0) {
          throw std::runtime_error(
              "Tensor: GPU memory (cuda_memory) was asked for, but no CUDA device is usable (" + found.note +
              ")");
        }
        if (devices_asked < 0 || devices_asked > cuda_devices) {
          throw std::invalid_argument("Tensor: CudaMemory::on_devices(" + std::to_string(devices_asked) +
                                      ") asks for " + std::to_string(devices_asked) + " CUDA devices; " +
                                      std::to_string(cuda_devices) + " are present");
        }
        if (devices_asked > 0) cuda_devices = devices_asked;
      }
      try {
        for (std::size_t b = 0; b < planned.size(); ++b) {
          Block block = planned[b];
          BlockSpace<D>& s = block.space;
          const bool local = owners.empty() || owners[g.device_of(b)] == rank;
          if (gpu) {
            // Distributed: every block of this rank on the one GPU it drives.
            block.cuda_device =
                owners.empty() ? static_cast<int>(g.device_of(b) % static_cast<std::size_t>(cuda_devices))
                               : group->local_rank() % cuda_devices;
            if (!local) {
              s.data = nullptr;  // another rank's block
              blocks.push_back(block);
              continue;
            }
            s.data = CudaSpace(block.cuda_device).allocate(block.bytes);
            blocks.push_back(block);
            DeviceStreams& streams = shared_device_streams(block.cuda_device);
            stream_ops::fill_zero(s.data, block.bytes, streams.compute_stream(), block.cuda_device);
            stream_ops::synchronize(streams.compute_stream(), block.cuda_device);
          } else if (local) {
            s.data = HostSpace{}.allocate(block.bytes);
            blocks.push_back(block);
          } else {
            s.data = nullptr;  // another rank's block
            blocks.push_back(block);
          }
        }
        // Zeroed once every block is allocated: a tensor too large for the
        // memory fails at its first refused allocation, not after filling
        // gigabytes of the blocks before it.
        if (!gpu)
          for (Block& block : blocks)
            if (block.space.data != nullptr) std::memset(block.space.data, 0, block.bytes);
        if (gpu) {
          // Padding copies between blocks on different GPUs go peer to peer
          // where the hardware allows (else the driver stages them).
          std::vector<int> used;
          for (const Block& block : blocks)
            if (std::find(used.begin(), used.end(), block.cuda_device) == used.end())
              used.push_back(block.cuda_device);
          for (int a : used)
            for (int b : used)
              if (a != b) stream_ops::enable_peer_access(a, b);
        }
      } catch (...) {
        release();
        throw;
      }
    }
    Impl(const Impl&) = delete;
    Impl& operator=(const Impl&) = delete;
    ~Impl() { release(); }

    // Every block's shape and size, nothing allocated yet. Throws
    // AllocationError naming the sizes when a block's cells or bytes, or the
    // bytes of all blocks together, overflow std::size_t.
    static std::vector<Block> plan_blocks(const TensorGeometry<D>& g) {
      std::vector<Block> planned(g.block_count());
      detail::CheckedSize total_bytes;
      for (std::size_t b = 0; b < planned.size(); ++b) {
        BlockSpace<D>& s = planned[b].space;
        s.extent = g.block_extent(b);
        s.padding = g.padding();
        detail::CheckedSize count(1);
        for (std::size_t d = 0; d < D; ++d) {
          const detail::CheckedSize padded = detail::CheckedSize(s.padding) * 2 + s.extent[d];
          s.padded[d] = padded.value();
          s.stride[d] = count.value();
          count *= padded;
        }
        const detail::CheckedSize bytes =
            count.fits() ? element_storage<T>::checked_bytes(count.value()) : count;
        total_bytes += bytes;
        if (!total_bytes.fits()) fail_size_overflow(g);
        s.count = count.value();
        planned[b].bytes = bytes.value();
      }
      return planned;
    }
    [[noreturn]] static void fail_size_overflow(const TensorGeometry<D>& g) {
      std::string message = "Tensor: sizes " + detail::format_size_product(g.sizes());
      if (g.padding() != 0) message += " (+ padding " + std::to_string(g.padding()) + ")";
      message += " of " + std::to_string(element_storage<T>::element_bytes) + "-byte elements";
      if (g.block_count() > 1) {
        message += " in " + std::to_string(g.block_count()) + " blocks of up to " +
                   detail::format_size_product(g.block_extent(0)) + " cells";
      }
      detail::throw_size_overflow(message + " overflow std::size_t");
    }
    void release() noexcept {
      for (Block& b : blocks) {
        if (gpu && b.space.data != nullptr) {
          CudaSpace(b.cuda_device).deallocate(b.space.data, b.bytes);  // waits for the device's work
        } else if (b.space.data != nullptr) {
          HostSpace{}.deallocate(b.space.data, b.bytes);
        }
      }
      blocks.clear();
    }
    static_assert(element_storage<T>::alignment <= HostSpace::alignment,
                  "Tensor: the element type needs more alignment than a page");
    static_assert(element_storage<T>::alignment <= CudaSpace::alignment,
                  "Tensor: the element type needs more alignment than cudaMalloc gives");

    TensorGeometry<D> geometry;
    bool gpu = false;
    std::vector<Block> blocks;
    // Distributed tensors: the group, the owner of each partition, this rank.
    std::shared_ptr<RankGroup> group;
    std::vector<int> owners;
    int rank = 0;
  };

  template <class... Sizes>
  static TensorGeometry<D> make_geometry(const Extents<D>& partitions, const Extents<D>& sub_partitions,
                                         Sizes... sizes) {
    if ((detail::is_negative(sizes) || ...)) {
      throw std::invalid_argument("Tensor: sizes and padding cannot be negative");
    }
    const std::array<std::size_t, sizeof...(Sizes)> given{static_cast<std::size_t>(sizes)...};
    constexpr std::size_t first = sizeof...(Sizes) - D;  // 1 when padding leads
    Extents<D> extents{};
    for (std::size_t d = 0; d < D; ++d) extents[d] = static_cast<std::size_t>(given[first + d]);
    const std::size_t padding = first == 1 ? static_cast<std::size_t>(given[0]) : 0;
    return TensorGeometry<D>(extents, partitions, sub_partitions, padding);
  }

  // The box (global coordinates, half-open) of `from`'s interior inside `to`'s padded box.
  using Index = std::array<std::ptrdiff_t, D>;
  struct Overlap {
    Index begin{}, end{};
    std::size_t count = 0;
  };
  Overlap overlap(std::size_t from, std::size_t to) const {
    const TensorGeometry<D>& g = geometry();
    const Extents<D> fo = g.block_origin(from), fe = g.block_extent(from);
    const Extents<D> to_o = g.block_origin(to), te = g.block_extent(to);
    const auto p = static_cast<std::ptrdiff_t>(g.padding());
    Overlap o;
    o.count = 1;
    for (std::size_t d = 0; d < D; ++d) {
      const auto lo = static_cast<std::ptrdiff_t>(to_o[d]) - p;
      const auto hi = static_cast<std::ptrdiff_t>(to_o[d] + te[d]) + p;
      o.begin[d] = std::max(lo, static_cast<std::ptrdiff_t>(fo[d]));
      o.end[d] = std::min(hi, static_cast<std::ptrdiff_t>(fo[d] + fe[d]));
      if (o.end[d] <= o.begin[d]) return Overlap{};
      o.count *= static_cast<std::size_t>(o.end[d] - o.begin[d]);
    }
    return o;
  }
  // Calls f(first cell, n, rows) for each run of rows of overlap `o` (rows
  // run along dimension 0, contiguous in every block; a run's rows are
  // consecutive along dimension 1, row_pitch apart), in order.
  template <class F>
  void walk_row_runs(const Overlap& o, const F& f) const {
    if (o.count == 0) return;
    detail::walk_row_runs<D>(o.begin, o.end, f);
  }
  // Elements between the starts of consecutive rows (along dimension 1) of
  // `block`'s buffer; a 1D tensor's runs are single rows of n elements.
  std::size_t row_pitch(std::size_t block, std::size_t n) const {
    if constexpr (D == 1) {
      return n;
    } else {
      return block_space(block).stride[1];
    }
  }
  // Where global cell `g` (inside the block's padded box) is in its buffer.
  std::size_t offset_in(std::size_t block, const Index& g) const {
    const BlockSpace<D>& s = block_space(block);
    const Extents<D> origin = geometry().block_origin(block);
    std::size_t at = 0;
    for (std::size_t d = 0; d < D; ++d) {
      at += static_cast<std::size_t>(g[d] - static_cast<std::ptrdiff_t>(origin[d]) +
                                     static_cast<std::ptrdiff_t>(s.padding)) *
            s.stride[d];
    }
    return at;
  }
  void require_local(std::size_t block, const char* what) const {
    if (!is_local(block)) {
      throw std::logic_error(std::string("Tensor::") + what + ": block " + std::to_string(block) +
                             " belongs to rank " + std::to_string(owner_of(block)) + "; this is rank " +
                             std::to_string(rank()) +
                             " (padding between ranks moves through a graph: padded access in split())");
    }
  }

  static Extents<D> ones() noexcept {
    Extents<D> e{};
    e.fill(1);
    return e;
  }
  const Impl& checked() const {
    if (!impl_) throw std::logic_error("Tensor: this tensor is empty (default-constructed)");
    return *impl_;
  }
  std::size_t checked_block(std::size_t block) const {
    if (block >= geometry().block_count()) {
      throw std::out_of_range("Tensor: block " + std::to_string(block) + " out of range (the tensor has " +
                              std::to_string(geometry().block_count()) + " blocks)");
    }
    return block;
  }

  std::shared_ptr<Impl> impl_;
};

// Copies every block of `src` into `dst`, padding included, between any two
// of host and GPU memory, and returns once the copy is done. The tensors must
// be split alike (the same sizes, blocks and padding); otherwise it throws
// std::invalid_argument naming both shapes.
template <class T, std::size_t D>
void deep_copy(const Tensor<T, D>& dst, const Tensor<T, D>& src) {
  const TensorGeometry<D>& a = dst.geometry();
  const TensorGeometry<D>& b = src.geometry();
  const auto shape = [](const TensorGeometry<D>& g) {
    return detail::format_extents(g.sizes()) + " in " + std::to_string(g.block_count()) +
           " blocks (padding " + std::to_string(g.padding()) + ")";
  };
  if (a.sizes() != b.sizes() || a.padding() != b.padding() || a.block_count() != b.block_count()) {
    throw std::invalid_argument("deep_copy: Tensor " + shape(b) + " cannot be copied into Tensor " +
                                shape(a) + ": they must be split alike");
  }
  for (std::size_t k = 0; k < a.block_count(); ++k) {
    if (a.block_extent(k) != b.block_extent(k)) {
      throw std::invalid_argument("deep_copy: block " + std::to_string(k) + " is " +
                                  detail::format_extents(b.block_extent(k)) + " in the source but " +
                                  detail::format_extents(a.block_extent(k)) +
                                  " in the destination: the tensors must be split alike");
    }
  }
  if (dst == src) return;
  for (std::size_t k = 0; k < a.block_count(); ++k) {
    if (dst.owner_of(k) != src.owner_of(k) || dst.rank() != src.rank()) {
      throw std::invalid_argument("deep_copy: block " + std::to_string(k) + " belongs to rank " +
                                  std::to_string(src.owner_of(k)) + " in the source but to rank " +
                                  std::to_string(dst.owner_of(k)) +
                                  " in the destination: the tensors must be distributed alike");
    }
  }
  std::vector<std::pair<CudaStream, int>> used;
  for (std::size_t k = 0; k < a.block_count(); ++k) {
    if (!src.is_local(k)) continue;  // another rank copies it
    const BlockSpace<D>& to = dst.block_space(k);
    const BlockSpace<D>& from = src.block_space(k);
    const std::size_t bytes = element_storage<T>::bytes(to.count);
    const int device = dst.in_gpu_memory() ? dst.cuda_device_of(k) : src.cuda_device_of(k);
    if (device < 0) {
      std::memcpy(to.data, from.data, bytes);
      continue;
    }
    const CudaStream stream = shared_device_streams(device).compute_stream();
    stream_ops::copy(to.data, from.data, bytes, stream, device);
    // One wait per stream at the end, not one per block.
    if (std::find(used.begin(), used.end(), std::pair{stream, device}) == used.end())
      used.emplace_back(stream, device);
  }
  for (const auto& [stream, device] : used) stream_ops::synchronize(stream, device);
}

}  // namespace weft
