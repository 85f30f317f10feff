// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Node names, both ways: id -> name for dumps and errors, name -> id for
// find() and add_edge(name, name), in constant time. Most nodes of a large
// graph have no name, so only named ones take space. Internal.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace weft::detail {

class NodeNames {
 public:
  using NodeId = std::int32_t;

  NodeNames() = default;
  // The name index points into by_id_'s strings, so a copy rebuilds it.
  NodeNames(const NodeNames& other) : by_id_(other.by_id_) { reindex(); }
  NodeNames& operator=(const NodeNames& other) {
    if (this != &other) {
      by_id_ = other.by_id_;
      reindex();
    }
    return *this;
  }
  // Moving keeps the map's nodes, and with them the strings the index views.
  NodeNames(NodeNames&&) noexcept = default;
  NodeNames& operator=(NodeNames&&) noexcept = default;
  ~NodeNames() = default;

  // "" for a node without a name.
  std::string_view name(NodeId id) const {
    const auto it = by_id_.find(id);
    return it == by_id_.end() ? std::string_view() : std::string_view(it->second);
  }
  std::optional<NodeId> find(std::string_view name) const {
    if (name.empty()) return std::nullopt;
    const auto it = by_name_.find(name);
    return it == by_name_.end() ? std::nullopt : std::optional<NodeId>(it->second);
  }
  // Names `id` (replacing its name); the caller has checked that no other
  // node has that name. An empty name removes it.
  void set(NodeId id, std::string name) {
    if (const auto it = by_id_.find(id); it != by_id_.end()) {
      by_name_.erase(std::string_view(it->second));
      by_id_.erase(it);
    }
    if (name.empty()) return;
    const auto [it, inserted] = by_id_.emplace(id, std::move(name));
    by_name_.emplace(std::string_view(it->second), id);
  }
  bool empty() const noexcept { return by_id_.empty(); }
  std::size_t size() const noexcept { return by_id_.size(); }
  const std::unordered_map<NodeId, std::string>& by_id() const noexcept { return by_id_; }

 private:
  void reindex() {
    by_name_.clear();
    by_name_.reserve(by_id_.size());
    for (const auto& [id, name] : by_id_) by_name_.emplace(std::string_view(name), id);
  }

  std::unordered_map<NodeId, std::string> by_id_;
  std::unordered_map<std::string_view, NodeId> by_name_;
};

}  // namespace weft::detail
