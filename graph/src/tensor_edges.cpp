// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Tensor operations (split, boundary, reduce) as nodes and edges: one node
// per block, the padding copies of padded accesses and the ordering rules
// between them (Ripple section 5.4, Figures 7 and 9).
#include <weft/graph/graph.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <string_view>

#include "node_label.hpp"

namespace weft {

namespace {

std::vector<Graph::NodeId> merged(std::vector<Graph::NodeId> a, const std::vector<Graph::NodeId>& b) {
  a.insert(a.end(), b.begin(), b.end());
  std::sort(a.begin(), a.end());
  a.erase(std::unique(a.begin(), a.end()), a.end());
  return a;
}

const std::vector<Graph::NodeId>& lookup(
    const std::map<detail::PaddingLedger::Key, std::vector<Graph::NodeId>>& map,
    const detail::PaddingLedger::Key& key) {
  static const std::vector<Graph::NodeId> none;
  const auto it = map.find(key);
  return it == map.end() ? none : it->second;
}

}  // namespace

void Graph::check_tensor_operands(const detail::PartitionedOp& op, const std::string& where) const {
  if (op.tensors.empty()) throw std::invalid_argument(where + ": needs a Tensor argument");
  const detail::TensorUse& first = op.tensors.front();
  for (std::size_t k = 0; k < op.tensors.size(); ++k) {
    const detail::TensorUse& use = op.tensors[k];
    const std::string argument = "tensor argument " + std::to_string(k + 1) + " (" + use.description + ")";
    if (k > 0 && use.split_signature != first.split_signature) {
      throw std::invalid_argument(where + ": " + argument + " is not split like tensor argument 1 (" +
                                  first.description +
                                  "); the tensors of one operation need the same blocks on the same devices");
    }
    if (use.access != PaddedAccess::None && use.padding == 0) {
      throw std::invalid_argument(where + ": " + argument +
                                  " has no padding, so a padded access would read outside its blocks");
    }
    if (use.gpu_memory != first.gpu_memory) {
      throw std::invalid_argument(where + ": " + argument + " is in " + (use.gpu_memory ? "GPU" : "host") +
                                  " memory and tensor argument 1 is not; one operation works in one memory");
    }
    if (use.gpu_memory && op.gpu_works.empty()) {
      throw std::invalid_argument(
          where + ": " + argument + " is in GPU memory: " +
          (std::string_view(op.operation) == "split"
               ? "its kernel must be a weft::cuda::kernel (views/cuda/block_kernel_cuda.cuh, in a .cu file)"
               : "its GPU version is made only in files compiled by nvcc (.cu)"));
    }
    if (!use.gpu_memory && op.works.empty()) {
      throw std::invalid_argument(
          where + ": " + argument +
          " is in host memory, but the kernel is a weft::cuda::kernel: make the tensors "
          "with weft::cuda_memory, or pass the kernel itself");
    }
    for (std::size_t other = 0; other < k; ++other) {
      if (op.tensors[other].id == use.id &&
          (use.access != PaddedAccess::None || op.tensors[other].access != PaddedAccess::None)) {
        throw std::invalid_argument(where + ": " + argument + " is also tensor argument " +
                                    std::to_string(other + 1) +
                                    "; a tensor with padded access may appear once in an operation");
      }
    }
  }
}

// Padding copies (Figures 7 and 9). A copy reads block `from` and writes
// `to`'s padding, so it follows what came before on both blocks and
// whatever else still writes or reads that padding. Within a process one
// node fills a block's padding from all its neighbours, for every padded
// tensor of the operation: a 3D block has 26 neighbours, and a node per
// pair cost more to schedule than small copies take (docs/tensors.md).
// Between ranks each pair is a node of its own, which sends or receives.
// Returns the extra predecessors of each block's node; records the copies'
// roles for named() and, in `fresh`, who reads and uses which padding now.
std::vector<std::vector<Graph::NodeId>> Graph::add_padding_copies(const detail::PartitionedOp& op,
                                                                  ExecutionKind kind,
                                                                  const std::vector<NodeId>& level_before,
                                                                  detail::PaddingLedger& fresh) {
  const detail::TensorUse& first = op.tensors.front();
  const std::int32_t split = split_index(first.split_signature);
  const auto blocks = static_cast<int>(first.blocks);
  const auto predecessors_of = [&](std::size_t block) {
    std::vector<NodeId> out;
    for (NodeId p : level_before)
      if (must_precede(p, first.split_signature, static_cast<int>(block))) out.push_back(p);
    return out;
  };
  // What the fill nodes call, shared by all of them: each tensor's copy.
  using HostCopy = std::function<void(std::size_t, std::size_t)>;
  using GpuCopy = std::function<void(std::size_t, std::size_t, GpuStream)>;
  auto host_copies = std::make_shared<std::vector<HostCopy>>();
  auto gpu_copies = std::make_shared<std::vector<GpuCopy>>();
  for (const detail::TensorUse& use : op.tensors) {
    host_copies->push_back(use.copy_padding);
    gpu_copies->push_back(use.copy_padding_on_stream);
  }
  std::vector<std::vector<NodeId>> waits(first.blocks);
  for (int to = 0; to < blocks; ++to) {
    const auto into = static_cast<std::size_t>(to);
    std::vector<std::pair<std::size_t, std::size_t>> local;  // (tensor, from) filled by one node
    for (std::size_t t = 0; t < op.tensors.size(); ++t) {
      const detail::TensorUse& use = op.tensors[t];
      if (!use.copy_padding) continue;
      for (std::size_t from : use.padding_sources(into)) {
        if (use.owners.empty() || use.owners[from] == use.owners[into]) {
          local.emplace_back(t, from);
          continue;
        }
        // Between ranks the node sends or receives (rank_nodes.cpp): a host
        // node even for GPU memory, so that it runs once the kernels that
        // wrote `from` have finished, and its GPU successors after it. Both
        // owners run it.
        const detail::PaddingLedger::Key padding_of_to{use.id, into};
        detail::NodeRecord node;
        node.kind = NodeKind::Copy;
        node.execution = kind;
        node.partition = static_cast<int>(from);
        node.padding_to = to;
        node.split = split;
        node.device = use.devices[from];
        node.call = WorkGraphNodeCall::of([](void*) {}, nullptr);  // lowering makes it send or receive
        const NodeId id = append(node, merged(merged(predecessors_of(from), predecessors_of(into)),
                                              lookup(padding_.users, padding_of_to)));
        ranks_.set_owner(id, use.owners[from]);
        detail::RankMessage message;
        message.node = id;
        message.sender = use.owners[from];
        message.receiver = use.owners[into];
        message.from = static_cast<std::int32_t>(from);
        message.to = to;
        message.bytes = use.padding_bytes(from, into);
        message.gpu_memory = use.gpu_memory;
        message.pack = [pack = use.pack_padding, from, into](void* out) { pack(from, into, out); };
        message.unpack = [unpack = use.unpack_padding, from, into](const void* in) {
          unpack(from, into, in);
        };
        ranks_.messages.push_back(std::move(message));
        waits[into].push_back(id);  // into to's padding: to's kernel reads it
        cursor_.helpers.emplace_back(id, "pad" + std::to_string(from) + "to" + std::to_string(to));
        if (use.access == PaddedAccess::Exclusive) waits[from].push_back(id);  // from's kernel overwrites it
        fresh.readers[{use.id, from}].push_back(id);
        fresh.users[padding_of_to].push_back(id);
      }
    }
    if (local.empty()) continue;

    // The node filling to's padding in this process: partition and
    // padding_to both `to`, which marks a copy that reads its neighbours.
    detail::NodeRecord node;
    node.kind = NodeKind::Copy;
    node.execution = kind;
    node.partition = to;
    node.padding_to = to;
    node.split = split;
    node.device = first.devices[into];
    std::vector<NodeId> before = predecessors_of(into);
    std::vector<bool> fills(op.tensors.size(), false);  // which tensors' padding it fills
    for (const auto& [t, from] : local) {
      before = merged(std::move(before), predecessors_of(from));
      fills[t] = true;
    }
    for (std::size_t t = 0; t < fills.size(); ++t)
      if (fills[t]) before = merged(std::move(before), lookup(padding_.users, {op.tensors[t].id, into}));
    if (first.gpu_memory) {
      // A GPU node on the receiving device's first copy stream, so that it
      // overlaps the kernels (Figure 7); events order it.
      node.execution = ExecutionKind::Gpu;
      node.copy_stream = 0;
      node.aux = static_cast<std::int32_t>(stream_works_.size());
      stream_works_.push_back(StreamWork::make([copies = gpu_copies, local, into](GpuStream s) {
        for (const auto& [t, from] : local) (*copies)[t](from, into, s);
      }));
    } else {
      // skip_block: the kernel answers the same from here to its node on
      // `to` (docs/tensors.md), and a block it skips reads no padding.
      // skip_padding_copy: the padding holds what the copy would bring, or
      // the kernel does not read it.
      node.call = callables_.store(
          [copies = host_copies, local, skips = op.skips_block, needless = op.skips_padding_copy, into] {
            if (skips && skips(into)) return;
            for (const auto& [t, from] : local) {
              if (needless && needless(from, into)) continue;
              (*copies)[t](from, into);
            }
          });
    }
    const NodeId id = append(node, before);
    std::vector<std::int32_t>& reads = fill_reads_[id];
    for (const auto& [t, from] : local) reads.push_back(static_cast<std::int32_t>(from));
    std::sort(reads.begin(), reads.end());
    reads.erase(std::unique(reads.begin(), reads.end()), reads.end());
    if (!first.owners.empty()) ranks_.set_owner(id, first.owners[into]);
    waits[into].push_back(id);  // into to's padding: to's kernel reads it
    cursor_.helpers.emplace_back(id, "pad" + std::to_string(to));
    for (const auto& [t, from] : local) {
      const detail::TensorUse& use = op.tensors[t];
      if (use.access == PaddedAccess::Exclusive) waits[from].push_back(id);  // from's kernel overwrites it
      fresh.readers[{use.id, from}].push_back(id);
    }
    for (std::size_t t = 0; t < fills.size(); ++t)
      if (fills[t]) fresh.users[{op.tensors[t].id, into}].push_back(id);
  }
  return waits;
}

Graph& Graph::add_partitioned(detail::PartitionedOp op, ExecutionKind kind, bool after_last) {
  runs_.refuse_changes_while_running("change");
  const std::string where = std::string("Graph::") + (after_last ? "then_" : "") + op.operation;
  check_tensor_operands(op, where);
  const detail::TensorUse& first = op.tensors.front();
  for (const detail::TensorUse& use : op.tensors) {
    ranks_.adopt(use.group, where);
    if (!use.owners.empty()) ranks_.note_tensor(use.description);
  }
  if (!first.owners.empty() && op.finish && !op.partial) {
    throw std::invalid_argument(where +
                                ": the result type is not trivially copyable, so the partials of a "
                                "distributed tensor cannot travel between ranks");
  }
  const std::vector<NodeId> level_before = after_last ? cursor_.last_level : cursor_.previous_level;
  if (first.blocks > 1) {
    // Each block's node would be a choice of its own, and the rest of the
    // operation would wait for blocks that never run.
    for (NodeId p : level_before) {
      if (record(p).kind != NodeKind::Condition) continue;
      throw std::logic_error(where + ": it would follow condition node " + detail::node_label(*this, p) +
                             ", which runs one of its successors, but it adds a node per block (" +
                             std::to_string(first.blocks) +
                             "), so only one block would run; put the operation in a subgraph and add that "
                             "after the condition node (g.then(subgraph): one choice), or add a node "
                             "between them (g.then([] {}))");
    }
  }
  std::vector<std::pair<NodeId, std::string>> helpers;
  cursor_.helpers.clear();
  detail::PaddingLedger fresh;
  const std::vector<std::vector<NodeId>> waits = add_padding_copies(op, kind, level_before, fresh);
  helpers.swap(cursor_.helpers);

  // The per-block nodes.
  const std::int32_t split = split_index(first.split_signature);
  const auto added_first = static_cast<NodeId>(nodes_.size());
  for (std::size_t b = 0; b < first.blocks; ++b) {
    std::vector<NodeId> before = waits[b];
    for (NodeId p : level_before)
      if (must_precede(p, first.split_signature, static_cast<int>(b))) before.push_back(p);
    for (const detail::TensorUse& use : op.tensors) {
      // Earlier copies still reading this block must finish before it changes.
      auto it = padding_.readers.find({use.id, b});
      if (it == padding_.readers.end()) continue;
      before.insert(before.end(), it->second.begin(), it->second.end());
      if (after_last) padding_.readers.erase(it);  // later nodes on b follow this one
    }
    std::sort(before.begin(), before.end());
    before.erase(std::unique(before.begin(), before.end()), before.end());
    detail::NodeRecord node;
    node.kind = op.kind;
    node.execution = kind;
    node.partition = static_cast<int>(b);
    node.split = split;
    node.device = first.devices[b];
    if (!first.gpu_memory) {
      node.call = callables_.adopt(std::move(op.works[b]));
    } else {
      node.execution = ExecutionKind::Gpu;
      node.aux = static_cast<std::int32_t>(stream_works_.size());
      stream_works_.push_back(std::move(op.gpu_works[b]));
    }
    const NodeId id = append(node, before);
    if (!first.owners.empty()) ranks_.set_owner(id, first.owners[b]);
    for (const detail::TensorUse& use : op.tensors)
      if (use.copy_padding) fresh.users[{use.id, b}].push_back(id);  // reads its padding
  }
  for (auto& [key, readers] : fresh.readers) {
    std::vector<NodeId>& pending = padding_.readers[key];
    pending.insert(pending.end(), readers.begin(), readers.end());
  }
  for (auto& [key, users] : fresh.users) {
    // After a then_ operation its nodes follow the earlier users of this
    // padding, so only they need following from now on.
    std::vector<NodeId>& recorded = padding_.users[key];
    if (after_last) recorded.clear();
    recorded.insert(recorded.end(), users.begin(), users.end());
  }
  const auto blocks = static_cast<NodeId>(first.blocks);
  std::vector<NodeId> level(first.blocks);
  for (NodeId b = 0; b < blocks; ++b) level[static_cast<std::size_t>(b)] = added_first + b;
  if (op.finish) {
    std::vector<NodeId> joined(level.begin(), level.end());
    if (!first.owners.empty()) {
      // Distributed: each block's owner sends its partial to every other
      // rank, and every rank joins all of them in block order.
      for (NodeId b = 0; b < blocks; ++b) {
        detail::NodeRecord share;
        share.kind = NodeKind::Copy;
        share.execution = ExecutionKind::Cpu;
        share.partition = b;
        share.split = split;
        share.call = WorkGraphNodeCall::of([](void*) {}, nullptr);  // lowering makes it send or receive
        const NodeId id = append(share, {added_first + b});
        detail::RankMessage message;
        message.node = id;
        message.sender = first.owners[static_cast<std::size_t>(b)];
        message.partial = op.partial(static_cast<std::size_t>(b));
        message.bytes = message.partial.bytes;
        ranks_.messages.push_back(std::move(message));
        joined.push_back(id);
        helpers.emplace_back(id, "share" + std::to_string(b));
      }
    }
    detail::NodeRecord node;
    node.kind = NodeKind::Reduce;
    node.execution = first.gpu_memory ? ExecutionKind::Cpu : kind;  // GPU: joins the partials on the host
    node.call = callables_.adopt(std::move(op.finish));
    level.push_back(append(node, joined));
    helpers.emplace_back(level.back(), "finish");
  }
  cursor_.close(level, added_first, blocks, after_last);
  cursor_.helpers = std::move(helpers);
  changed();
  return *this;
}

}  // namespace weft
