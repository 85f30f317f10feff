#include <weft/graph/graph.hpp>

#include <algorithm>
#include <stdexcept>
#include <string>

#include <weft/runtime/task_scheduler.hpp>

#include "program.hpp"

namespace weft {

Graph::Graph(const Graph& other)
    : kind_(other.kind_),
      nodes_(other.nodes_),
      edges_(other.edges_),
      previous_level_(other.previous_level_),
      last_level_(other.last_level_),
      last_added_(other.last_added_),
      last_helpers_(other.last_helpers_),
      predicate_(other.predicate_),
      padding_readers_(other.padding_readers_),
      padding_users_(other.padding_users_),
      conditional_(other.conditional_) {}

Graph& Graph::operator=(const Graph& other) {
  if (this != &other) {
    Graph copy(other);
    *this = std::move(copy);
  }
  return *this;
}

Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;
Graph::~Graph() = default;

void Graph::close_operation(const std::vector<NodeId>& level, const std::vector<NodeId>& named,
                            bool after_last) {
  if (after_last) {
    previous_level_ = last_level_;
    last_level_ = level;  // a new level after the last one
  } else {
    last_level_.insert(last_level_.end(), level.begin(), level.end());  // beside the last level
  }
  last_added_ = named;
  last_helpers_.clear();
}

Graph::NodeId Graph::append(GraphNode node, const std::vector<NodeId>& predecessors) {
  const auto id = static_cast<NodeId>(nodes_.size());
  nodes_.push_back(std::move(node));
  for (NodeId p : predecessors) edges_.emplace_back(p, id);
  return id;
}

Graph& Graph::add(std::vector<NodeWork> works, ExecutionKind kind, bool after_last) {
  std::vector<NodeSpec> specs;
  for (NodeWork& w : works) specs.push_back(NodeSpec{std::move(w), {}, {}, -1});
  return add_specs(std::move(specs), kind, after_last);
}

Graph& Graph::add_specs(std::vector<NodeSpec> specs, ExecutionKind kind, bool after_last) {
  const std::vector<NodeId> predecessors = after_last ? last_level_ : previous_level_;
  std::vector<NodeId> added;
  for (NodeSpec& spec : specs) {
    GraphNode node;
    node.execution = kind;
    node.work = arena_->adopt(std::move(spec.work));
    if (spec.stream_work) {  // on_gpu: always a GPU node, on its device
      node.execution = ExecutionKind::Gpu;
      node.device = spec.device;
      node.stream_work = std::move(spec.stream_work);
      node.copy_stream = spec.copy_stream;
    }
    added.push_back(append(std::move(node), predecessors));
  }
  close_operation(added, added, after_last);
  changed();
  return *this;
}

std::vector<Graph::NodeId> Graph::sinks() const {
  std::vector<bool> has_successor(nodes_.size(), false);
  for (const Edge& e : edges_) has_successor[static_cast<std::size_t>(e.first)] = true;
  std::vector<NodeId> out;
  for (std::size_t i = 0; i < nodes_.size(); ++i)
    if (!has_successor[i]) out.push_back(static_cast<NodeId>(i));
  return out;
}

Graph& Graph::add_sync(NodeWork work) {
  GraphNode node;
  node.kind = NodeKind::Sync;
  node.execution = ExecutionKind::Cpu;  // it waits on both domains, then runs on the host
  node.work = arena_->adopt(std::move(work));
  previous_level_ = sinks();
  const NodeId id = append(std::move(node), previous_level_);
  last_level_ = {id};
  last_added_ = {id};
  last_helpers_.clear();
  changed();
  return *this;
}

Graph& Graph::add_conditional(std::function<bool()> pred) {
  if (conditional_) throw std::logic_error("Graph::conditional: this graph already has a predicate");
  GraphNode node;
  node.kind = NodeKind::Conditional;
  node.execution = ExecutionKind::Cpu;
  previous_level_ = sinks();
  const NodeId id = append(std::move(node), previous_level_);
  last_level_ = {id};
  last_added_ = {id};
  last_helpers_.clear();
  predicate_ = std::move(pred);
  conditional_ = true;
  changed();
  return *this;
}

namespace {

// Whether a node of the level before must precede a node working on block
// `block` of a tensor split as `split` (0: no tensor): unless both work on
// blocks of tensors split the same way, and on different blocks.
bool must_precede(const GraphNode& before, std::uint64_t split, int block) {
  return block < 0 || before.partition < 0 || before.split_signature != split || before.partition == block;
}

// The same for a node that may touch two blocks (a padding copy reads one
// and writes another's padding).
bool must_precede(const GraphNode& before, const GraphNode& later) {
  return must_precede(before, later.split_signature, later.partition) ||
         (later.padding_to >= 0 && must_precede(before, later.split_signature, later.padding_to));
}

}  // namespace

Graph& Graph::add_subgraph(const Graph& subgraph, bool after_last) {
  if (&subgraph == this) throw std::invalid_argument("Graph: a graph cannot contain itself as a subgraph");
  subgraph.validate();
  const std::vector<NodeId> predecessors = after_last ? last_level_ : previous_level_;
  std::vector<NodeId> added_last;
  std::vector<NodeId> added_all;
  if (subgraph.is_conditional()) {
    // A loop cannot be inlined: one node runs the subgraph until it stops.
    GraphNode node;
    node.kind = NodeKind::Subgraph;
    node.execution = ExecutionKind::Cpu;
    node.subgraph = std::make_shared<const Graph>(subgraph);
    const NodeId id = append(std::move(node), predecessors);
    added_last = added_all = {id};
  } else {
    for (const GraphNode& n : subgraph.nodes_) {
      if (!n.name.empty() && find(n.name)) {
        throw std::invalid_argument("Graph: the subgraph's node name '" + n.name + "' is already used here");
      }
    }
    const auto offset = static_cast<NodeId>(nodes_.size());
    std::vector<bool> has_predecessor(subgraph.nodes_.size(), false);
    for (const Edge& e : subgraph.edges_) has_predecessor[static_cast<std::size_t>(e.second)] = true;
    for (std::size_t i = 0; i < subgraph.nodes_.size(); ++i) {
      // Roots of the subgraph hang off our level (a root on a tensor
      // partition only off the nodes on its blocks and the untied ones,
      // section 5.3.5); the rest keep their edges. A node that may write a
      // block also waits for our padding copies still reading that block
      // (section 5.4; tensors are not recorded per node, so any tensor's).
      const GraphNode& node = subgraph.nodes_[i];
      std::vector<NodeId> before;
      if (!has_predecessor[i]) {
        for (NodeId p : predecessors)
          if (must_precede(nodes_[static_cast<std::size_t>(p)], node)) before.push_back(p);
      }
      if (node.partition >= 0 && node.kind != NodeKind::Copy) {
        for (const auto& [key, readers] : padding_readers_) {
          if (key.second == static_cast<std::size_t>(node.partition))
            before.insert(before.end(), readers.begin(), readers.end());
        }
      }
      std::sort(before.begin(), before.end());
      before.erase(std::unique(before.begin(), before.end()), before.end());
      const NodeId id = append(node, before);
      added_all.push_back(id);
    }
    for (const Edge& e : subgraph.edges_) edges_.emplace_back(e.first + offset, e.second + offset);
    // Its padding copies that no node on their block waits for yet still
    // bind the nodes added after it (section 5.4).
    for (const auto& [key, readers] : subgraph.padding_readers_) {
      std::vector<NodeId>& pending = padding_readers_[key];
      for (NodeId r : readers) pending.push_back(r + offset);
    }
    for (NodeId id : subgraph.last_level_) added_last.push_back(id + offset);
  }
  close_operation(added_last, added_all, after_last);
  changed();
  return *this;
}

Graph& Graph::add_partitioned(detail::PartitionedOp op, ExecutionKind kind, bool after_last) {
  const std::string where = std::string("Graph::") + (after_last ? "then_" : "") + op.operation;
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
  const auto blocks = static_cast<int>(first.blocks);
  const std::uint64_t split = first.split_signature;
  const std::vector<NodeId> level_before = after_last ? last_level_ : previous_level_;
  const auto predecessors_of = [&](int block) {
    std::vector<NodeId> out;
    for (NodeId p : level_before)
      if (must_precede(nodes_[static_cast<std::size_t>(p)], split, block)) out.push_back(p);
    return out;
  };
  const auto merged = [](std::vector<NodeId> a, const std::vector<NodeId>& b) {
    a.insert(a.end(), b.begin(), b.end());
    std::sort(a.begin(), a.end());
    a.erase(std::unique(a.begin(), a.end()), a.end());
    return a;
  };
  const auto block_index = [](int b) { return static_cast<std::size_t>(b); };
  const auto lookup = [](const auto& map, const std::pair<const void*, std::size_t>& key) {
    const auto it = map.find(key);
    return it == map.end() ? std::vector<NodeId>{} : it->second;
  };

  // Padding copies (Figures 7 and 9): one node per neighbouring pair. A copy
  // reads `from` and writes `to`'s padding, so it follows what came before on
  // both blocks, and whatever else still writes or reads that padding.
  std::vector<std::vector<NodeId>> waits(block_index(blocks));  // extra predecessors of each block's node
  std::vector<std::pair<NodeId, std::string>> helpers;          // copies and finish, for named()
  std::map<std::pair<const void*, std::size_t>, std::vector<NodeId>> new_readers, new_users;
  for (const detail::TensorUse& use : op.tensors) {
    if (!use.copy_padding) continue;
    for (int to = 0; to < blocks; ++to) {
      const std::pair<const void*, std::size_t> padding_of_to{use.id, block_index(to)};
      for (std::size_t from : use.padding_sources(block_index(to))) {
        GraphNode node;
        node.kind = NodeKind::Copy;
        node.execution = kind;
        node.partition = static_cast<int>(from);
        node.padding_to = to;
        node.split_signature = split;
        node.device = use.devices[from];
        if (use.gpu_memory) {
          // A GPU node on the receiving device's first copy stream, so that
          // it overlaps the kernels (Figure 7); events order it.
          node.execution = ExecutionKind::Gpu;
          node.device = use.devices[block_index(to)];
          node.copy_stream = 0;
          node.stream_work = StreamWork::make([copy = use.copy_padding_on_stream, from, to](GpuStream s) {
            copy(from, static_cast<std::size_t>(to), s);
          });
        } else {
          node.work = arena_->adopt(NodeWork::make(
              [copy = use.copy_padding, from, to] { copy(from, static_cast<std::size_t>(to)); }));
        }
        const NodeId id = append(std::move(node),
                                 merged(merged(predecessors_of(static_cast<int>(from)), predecessors_of(to)),
                                        lookup(padding_users_, padding_of_to)));
        waits[block_index(to)].push_back(id);  // into to's padding: to's kernel reads it
        helpers.emplace_back(id, "pad" + std::to_string(from) + "to" + std::to_string(to));
        if (use.access == PaddedAccess::Exclusive)
          waits[from].push_back(id);  // from's kernel overwrites what it reads
        new_readers[{use.id, from}].push_back(id);
        new_users[padding_of_to].push_back(id);
      }
    }
  }

  // The per-block nodes.
  std::vector<NodeId> added;
  for (int b = 0; b < blocks; ++b) {
    std::vector<NodeId> before = merged(predecessors_of(b), waits[block_index(b)]);
    for (const detail::TensorUse& use : op.tensors) {
      // Earlier copies still reading this block must finish before it changes.
      auto it = padding_readers_.find({use.id, block_index(b)});
      if (it == padding_readers_.end()) continue;
      before = merged(std::move(before), it->second);
      if (after_last) padding_readers_.erase(it);  // later nodes on b follow this one
    }
    GraphNode node;
    node.kind = op.kind;
    node.execution = kind;
    node.partition = b;
    node.split_signature = split;
    node.device = first.devices[block_index(b)];
    if (!first.gpu_memory) {
      node.work = arena_->adopt(std::move(op.works[block_index(b)]));
    } else {
      node.execution = ExecutionKind::Gpu;
      node.stream_work = std::move(op.gpu_works[block_index(b)]);
    }
    const NodeId id = append(std::move(node), before);
    added.push_back(id);
    for (const detail::TensorUse& use : op.tensors)
      if (use.copy_padding) new_users[{use.id, block_index(b)}].push_back(id);  // reads its padding
  }
  for (auto& [key, readers] : new_readers) {
    std::vector<NodeId>& pending = padding_readers_[key];
    pending.insert(pending.end(), readers.begin(), readers.end());
  }
  for (auto& [key, users] : new_users) {
    // After a then_ operation its nodes follow the earlier users of this
    // padding, so only they need following from now on.
    std::vector<NodeId>& recorded = padding_users_[key];
    if (after_last) recorded.clear();
    recorded.insert(recorded.end(), users.begin(), users.end());
  }
  std::vector<NodeId> level = added;
  if (op.finish) {
    GraphNode node;
    node.kind = NodeKind::Reduce;
    node.execution = first.gpu_memory ? ExecutionKind::Cpu : kind;  // GPU: joins the partials on the host
    node.work = arena_->adopt(std::move(op.finish));
    level.push_back(append(std::move(node), added));
    helpers.emplace_back(level.back(), "finish");
  }
  close_operation(level, added, after_last);
  last_helpers_ = std::move(helpers);
  changed();
  return *this;
}

Graph& Graph::named(std::string name) {
  if (last_added_.empty()) throw std::logic_error("Graph::named: no node has been added yet");
  if (name.empty()) throw std::invalid_argument("Graph::named: a name cannot be empty");
  // The operation's nodes: name, or name.k for several; the nodes a tensor
  // operation adds around them get name.<role> (name.pad1to0, name.finish).
  std::vector<std::pair<NodeId, std::string>> labels;
  for (std::size_t k = 0; k < last_added_.size(); ++k)
    labels.emplace_back(last_added_[k], last_added_.size() == 1 ? name : name + "." + std::to_string(k));
  for (const auto& [id, role] : last_helpers_) labels.emplace_back(id, name + "." + role);
  for (const auto& [id, label] : labels) {
    const std::optional<NodeId> existing = find(label);
    if (existing && *existing != id) {
      throw std::invalid_argument("Graph::named: the name '" + label + "' is already used by node " +
                                  std::to_string(*existing));
    }
  }
  for (const auto& [id, label] : labels) nodes_[static_cast<std::size_t>(id)].name = label;
  return *this;
}

std::optional<Graph::NodeId> Graph::find(std::string_view name) const {
  if (name.empty()) return std::nullopt;
  for (std::size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].name == name) return static_cast<NodeId>(i);
  return std::nullopt;
}

Graph& Graph::add_edge(std::string_view from, std::string_view to) {
  const std::optional<NodeId> a = find(from), b = find(to);
  if (!a) throw std::invalid_argument("Graph::add_edge: no node named '" + std::string(from) + "'");
  if (!b) throw std::invalid_argument("Graph::add_edge: no node named '" + std::string(to) + "'");
  return add_edge(*a, *b);
}

Graph& Graph::add_edge(NodeId from, NodeId to) {
  const auto n = static_cast<NodeId>(nodes_.size());
  if (from < 0 || from >= n || to < 0 || to >= n) {
    throw std::out_of_range("Graph::add_edge: node " + std::to_string(from < 0 || from >= n ? from : to) +
                            " outside [0, " + std::to_string(n) + ")");
  }
  edges_.emplace_back(from, to);
  changed();
  return *this;
}

namespace {

std::string label_of(const Graph& g, Graph::NodeId id) {
  const std::string& name = g.node(id).name;
  // (built piecewise: g++ 12 -O3 warns falsely on "literal" + std::string)
  std::string label(name.empty() ? "#" : "'");
  label += name.empty() ? std::to_string(id) : name + "'";
  return label;
}

}  // namespace

std::vector<int> Graph::levels() const {
  const std::size_t n = nodes_.size();
  std::vector<std::vector<NodeId>> successors(n);
  std::vector<int> remaining(n, 0);
  for (const Edge& e : edges_) {
    successors[static_cast<std::size_t>(e.first)].push_back(e.second);
    ++remaining[static_cast<std::size_t>(e.second)];
  }
  std::vector<int> level(n, 0);
  std::vector<NodeId> ready;
  for (std::size_t i = 0; i < n; ++i)
    if (remaining[i] == 0) ready.push_back(static_cast<NodeId>(i));
  std::size_t visited = 0;
  while (!ready.empty()) {
    const NodeId v = ready.back();
    ready.pop_back();
    ++visited;
    for (NodeId s : successors[static_cast<std::size_t>(v)]) {
      level[static_cast<std::size_t>(s)] =
          std::max(level[static_cast<std::size_t>(s)], level[static_cast<std::size_t>(v)] + 1);
      if (--remaining[static_cast<std::size_t>(s)] == 0) ready.push_back(s);
    }
  }
  if (visited == n) return level;
  // Walk predecessors among the nodes left over: it must close a cycle.
  std::vector<std::vector<NodeId>> predecessors(n);
  for (const Edge& e : edges_) predecessors[static_cast<std::size_t>(e.second)].push_back(e.first);
  NodeId v = 0;
  while (remaining[static_cast<std::size_t>(v)] == 0) ++v;
  std::vector<int> seen_at(n, -1);
  std::vector<NodeId> path;
  while (seen_at[static_cast<std::size_t>(v)] < 0) {
    seen_at[static_cast<std::size_t>(v)] = static_cast<int>(path.size());
    path.push_back(v);
    for (NodeId u : predecessors[static_cast<std::size_t>(v)]) {
      if (remaining[static_cast<std::size_t>(u)] > 0) {
        v = u;
        break;
      }
    }
  }
  std::vector<NodeId> cycle(path.begin() + seen_at[static_cast<std::size_t>(v)], path.end());
  std::reverse(cycle.begin(), cycle.end());
  std::string text;
  for (NodeId id : cycle) text += label_of(*this, id) + " -> ";
  text += label_of(*this, cycle.front());
  throw std::invalid_argument("Graph: the graph has a cycle: " + text);
}

void Graph::validate() const { (void)levels(); }

std::shared_ptr<detail::Program> Graph::lowered() const {
  if (!program_) program_ = std::make_shared<detail::Program>(*this);
  return program_;
}

// ---- lowering and running ---------------------------------------------------

namespace detail {

namespace {

// CUDA calls it once the work a GPU node queued is done, or has failed
// (stream_ops::call_when_done). No CUDA call here: the code goes in the message.
void gpu_node_done(void* state, int status) {
  const auto* g = static_cast<const Program::GpuNode*>(state);
  if (status == 0) {
    g->engine->complete_deferred(g->node);
    return;
  }
  g->engine->complete_deferred(
      g->node, std::make_exception_ptr(std::runtime_error(
                   "Graph: the GPU work of node " + g->label + " failed on device " +
                   std::to_string(g->device) + " with CUDA error " + std::to_string(status) +
                   " (cudaGetErrorName says which); the device is unusable until the process restarts")));
}

// A GPU node's call: order the stream after GPU predecessors on other
// devices, queue the work, record the event later GPU nodes wait on, and ask
// for the callback that completes the node. Queuing the callback comes last:
// if anything before it throws, the node completes at once with the error.
void run_gpu_node(void* state) {
  auto* g = static_cast<Program::GpuNode*>(state);
  stream_ops::use_device(g->device);
  for (CudaEvent e : g->waits) stream_ops::wait(g->stream, e, g->device);
  g->work(GpuStream{g->device, g->stream});
  if (g->record) stream_ops::record(g->done, g->stream, g->device);
  if (g->callback) stream_ops::call_when_done(g->stream, &g->done_callback, g->device);
}

}  // namespace

Program::Program(const Graph& graph) {
  const std::size_t n = graph.nodes_.size();
  Crs<int> successors;
  successors.row_map.assign(n + 1, 0);
  for (const Graph::Edge& e : graph.edges_) ++successors.row_map[static_cast<std::size_t>(e.first) + 1];
  for (std::size_t i = 0; i < n; ++i) successors.row_map[i + 1] += successors.row_map[i];
  successors.entries.resize(graph.edges_.size());
  std::vector<int> fill(successors.row_map.begin(), successors.row_map.end() - 1);
  for (const Graph::Edge& e : graph.edges_) {
    successors.entries[static_cast<std::size_t>(fill[static_cast<std::size_t>(e.first)]++)] = e.second;
  }
  // GPU nodes made by on_gpu are deferred: their calls only queue work. A
  // GPU node after one on the same stream is ordered by the stream, one on
  // another stream or device by an event, so both may be queued as soon as the call
  // returned: they go first in the row, and the engine releases them early.
  std::vector<int> gpu_index(n, -1);
  std::size_t gpu_count = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (graph.nodes_[i].stream_work) gpu_index[i] = static_cast<int>(gpu_count++);
  std::vector<int> early;
  if (gpu_count > 0) {
    early.assign(n, -1);
    gpu_nodes.resize(gpu_count);
    for (std::size_t i = 0; i < n; ++i) {
      if (gpu_index[i] < 0) continue;
      const auto first = successors.entries.begin() + successors.row_map[i];
      const auto last = successors.entries.begin() + successors.row_map[i + 1];
      const auto middle = std::stable_partition(
          first, last, [&](int s) { return gpu_index[static_cast<std::size_t>(s)] >= 0; });
      early[i] = static_cast<int>(middle - first);
      GpuNode& g = gpu_nodes[static_cast<std::size_t>(gpu_index[i])];
      const GraphNode& node = graph.nodes_[i];
      g.node = static_cast<int>(i);
      g.label = label_of(graph, static_cast<Graph::NodeId>(i));
      g.done_callback = {&gpu_node_done, &g};
      g.device = node.device;
      g.copy_stream = node.copy_stream;
      g.work = node.stream_work;
      g.callback = middle != last || first == last;  // host successors, or a sink
      const auto same_stream = [](const GraphNode& a, const GraphNode& b) {
        return a.device == b.device && a.copy_stream == b.copy_stream;
      };
      for (auto it = first; it != middle; ++it)
        g.record = g.record || !same_stream(graph.nodes_[static_cast<std::size_t>(*it)], node);
    }
    for (const Graph::Edge& e : graph.edges_) {
      const int from = gpu_index[static_cast<std::size_t>(e.first)],
                to = gpu_index[static_cast<std::size_t>(e.second)];
      const GpuNode* a = from >= 0 ? &gpu_nodes[static_cast<std::size_t>(from)] : nullptr;
      const GpuNode* b = to >= 0 ? &gpu_nodes[static_cast<std::size_t>(to)] : nullptr;
      if (a != nullptr && b != nullptr && (a->device != b->device || a->copy_stream != b->copy_stream))
        gpu_nodes[static_cast<std::size_t>(to)].wait_for.push_back(from);
    }
  }
  std::vector<Domain> domains(n);
  bool any_gpu = false;
  calls.resize(n);
  work.resize(n);
  subprograms.resize(n);
  std::size_t subgraph_nodes = 0;
  for (const GraphNode& node : graph.nodes_) subgraph_nodes += node.kind == NodeKind::Subgraph;
  subgraph_calls.reserve(subgraph_nodes);  // stable addresses: calls point into it
  for (std::size_t i = 0; i < n; ++i) {
    const GraphNode& node = graph.nodes_[i];
    domains[i] = domain_of(node.execution);
    any_gpu = any_gpu || domains[i] == Domain::Gpu;
    work[i] = node.work;
    calls[i] = {work[i].raw_call(), work[i].raw_state()};
    if (gpu_index[i] >= 0) {
      calls[i] = {&run_gpu_node, &gpu_nodes[static_cast<std::size_t>(gpu_index[i])]};
    } else if (node.kind == NodeKind::Subgraph) {
      if (node.subgraph == nullptr) {
        not_runnable = "node " + std::to_string(i) + " is a subgraph without its graph (loaded from JSON)";
      } else {
        subprograms[i] = std::make_shared<Program>(*node.subgraph);
        if (!subprograms[i]->not_runnable.empty()) not_runnable = subprograms[i]->not_runnable;
        subgraph_calls.push_back({this, subprograms[i].get()});
        // A nested run: the worker that runs this node helps meanwhile.
        calls[i] = {[](void* state) {
                      auto* call = static_cast<SubgraphCall*>(state);
                      call->child->run_once(*call->parent->executor, call->parent->cancel);
                    },
                    &subgraph_calls.back()};
      }
    } else if (node.kind == NodeKind::Conditional) {
      calls[i] = {[](void* state) {
                    auto* self = static_cast<Program*>(state);
                    self->repeat.store(self->predicate(), std::memory_order_relaxed);
                  },
                  this};
      if (!graph.predicate_)
        not_runnable = "the graph's predicate was not kept (graphs loaded from JSON cannot run)";
    } else if (!node.work && !node.stream_work) {
      not_runnable =
          "node " + std::to_string(i) + " has no callable: graphs loaded from JSON can be inspected, not run";
    }
  }
  predicate = graph.predicate_;
  if (!any_gpu) domains.clear();  // all CPU: the engine skips its per-node domain check
  try {
    policy = std::make_unique<WorkGraphPolicy<int>>(std::move(successors), std::move(domains));
  } catch (const std::invalid_argument&) {
    graph.validate();  // a cycle: report it by node names
    throw;
  }
  // Trace names: the node's name, else its kind.
  std::vector<const char*> names(n);
  for (std::size_t i = 0; i < n; ++i) {
    const GraphNode& node = graph.nodes_[i];
    names[i] = node.name.empty() ? to_string(node.kind) : intern_trace_name(node.name);
  }
  policy->set_trace_names(std::move(names));
  if (!early.empty()) policy->set_deferred(std::move(early));
  for (GpuNode& g : gpu_nodes) g.engine = policy.get();
}

Program::~Program() {
  for (GpuNode& g : gpu_nodes) {
    // The pool outlives every program (shared_device_streams is never destroyed).
    if (g.done != nullptr) shared_device_streams(g.device).events().release(g.done);
  }
}

void Program::bind_gpu() {
  for (const std::shared_ptr<Program>& sub : subprograms)
    if (sub) sub->bind_gpu();
  if (gpu_bound) return;
  for (GpuNode& g : gpu_nodes) {
    try {
      DeviceStreams& streams = shared_device_streams(g.device);
      g.stream = g.copy_stream < 0 ? streams.compute_stream() : streams.copy_stream(g.copy_stream);
      if (g.record && g.done == nullptr) g.done = streams.events().acquire();
    } catch (const std::exception& error) {
      throw std::runtime_error("Graph: GPU node " + std::to_string(g.node) + " cannot run on device " +
                               std::to_string(g.device) + ": " + error.what());
    }
  }
  for (GpuNode& g : gpu_nodes) {
    g.waits.clear();
    for (int from : g.wait_for) g.waits.push_back(gpu_nodes[static_cast<std::size_t>(from)].done);
  }
  gpu_bound = true;
}

void Program::synchronize_gpu() noexcept {
  for (const std::shared_ptr<Program>& sub : subprograms)
    if (sub) sub->synchronize_gpu();
  for (const GpuNode& g : gpu_nodes) {
    try {
      if (g.stream != nullptr) stream_ops::synchronize(g.stream, g.device);
    } catch (const std::exception&) {
      // A faulted device reports its error here again; the pass's own error
      // is the one the run's future carries.
    }
  }
}

void Program::run_once(Executor& on, const std::atomic<bool>* stop) {
  if (!not_runnable.empty()) throw std::logic_error("Graph: cannot run: " + not_runnable);
  executor = &on;
  cancel = stop;
  do {
    repeat.store(false, std::memory_order_relaxed);
    try {
      policy->run(on, calls.data(), stop);
    } catch (...) {
      synchronize_gpu();  // as GraphDriver does after a failed pass
      throw;
    }
    // The Conditional node ran last (it follows every sink) and set repeat.
  } while (predicate && repeat.load(std::memory_order_relaxed) &&
           (stop == nullptr || !stop->load(std::memory_order_relaxed)));
}

// The per-executor scheduler that runs graph drivers: a driver is one task
// whose future is the run's future.
struct GraphRuntime {
  explicit GraphRuntime(Executor& executor)
      : pool(HostSpace{}, 1u << 20, 64, 4096), scheduler(executor, pool) {}
  MemoryPool<HostSpace> pool;
  TaskScheduler scheduler;
};

void Program::start(Executor& on, const std::atomic<bool>* stop, Promise<>* done) {
  if (!not_runnable.empty()) throw std::logic_error("Graph: cannot run: " + not_runnable);
  executor = &on;
  cancel = stop;
  repeat.store(false, std::memory_order_relaxed);
  policy->start(
      on, calls.data(), stop,
      [](void* promise, std::exception_ptr error) {
        auto* p = static_cast<Promise<>*>(promise);
        if (error) {
          p->set_exception(std::move(error));
        } else {
          p->set_value();
        }
      },
      done);
}

// The run's driver: a task that starts one pass over the graph's nodes and
// respawns itself to wait for its end (Kokkos' respawn: it never blocks a
// worker), then starts the next pass while the conditional predicate, the
// run count or run_until's predicate ask for one.
struct GraphDriver {
  std::shared_ptr<Program> program;
  long count;  // < 0: until `until` says stop
  std::function<bool()> until;
  long finished = 0;
  Future<> pass;  // completes when the pass in flight ends
  std::shared_ptr<Promise<>> pass_done;

  void operator()(TaskMember& member) {
    if (!pass.is_null()) {
      try {
        pass.get();  // rethrows the pass's error, or weft::Cancelled
      } catch (...) {
        // GPU work queued before the failure may still run: the caller may
        // free its memory once the error reaches it.
        program->synchronize_gpu();
        throw;
      }
      pass = Future<>();
      // The Conditional node (if any) ran last and said whether to go again.
      if (!(program->predicate && program->repeat.load(std::memory_order_relaxed))) {
        ++finished;
        if (count >= 0 ? finished >= count : until()) return;  // complete
      }
    }
    const std::atomic<bool>& cancelled = current_task()->cancel_requested;
    if (cancelled.load(std::memory_order_relaxed)) throw Cancelled("the graph run was cancelled");
    Executor& executor = member.worker().executor();
    pass_done = std::make_shared<Promise<>>(executor);
    pass = pass_done->get_future();
    program->start(executor, &cancelled, pass_done.get());
    TaskScheduler::respawn(this, pass);
  }
};

}  // namespace detail

Future<> Graph::run_on(Executor& executor, long count, std::function<bool()> until) {
  if (count < 0 && !until) throw std::invalid_argument("Graph::run_on: run_until needs a predicate");
  std::shared_ptr<detail::Program> program = lowered();  // throws on a cycle, before anything runs
  if (!program->not_runnable.empty()) throw std::logic_error("Graph: cannot run: " + program->not_runnable);
  program->bind_gpu();  // GPU nodes' streams and events: made once, here, not while running
  auto& runtime = executor.extension<detail::GraphRuntime>();
  Future<> done = host_spawn(TaskSingle(runtime.scheduler),
                             detail::GraphDriver{program, count, std::move(until), 0, {}, {}});
  if (done.is_null())
    throw std::runtime_error("Graph::run_on: too many graph runs in flight (driver pool full)");
  return done;
}
}  // namespace weft
