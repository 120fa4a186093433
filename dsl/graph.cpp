#include "dsl/graph.h"

#include <boost/graph/adjacency_list.hpp>
#include <boost/graph/breadth_first_search.hpp>
#include <algorithm>
#include <iterator>
#include <set>

#include "dsl/error.h"

namespace gg {

struct Dag::Impl {
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::bidirectionalS>;
  Graph g;
};

Dag::Dag() : impl_(std::make_unique<Impl>()) {}
Dag::~Dag() = default;
Dag::Dag(const Dag& other) : impl_(std::make_unique<Impl>(*other.impl_)) {}
Dag& Dag::operator=(const Dag& other) {
  if (this != &other) impl_ = std::make_unique<Impl>(*other.impl_);
  return *this;
}

int Dag::add_node() { return static_cast<int>(boost::add_vertex(impl_->g)); }

void Dag::add_edge(int producer, int consumer) {
  GG_INTERNAL_CHECK(producer >= 0 && producer < size() && consumer >= 0 && consumer < size(), "edge out of range");
  GG_INTERNAL_CHECK(!reaches(consumer, producer), "edge would make a cycle");
  boost::add_edge(static_cast<size_t>(producer), static_cast<size_t>(consumer), impl_->g);
}

int Dag::size() const { return static_cast<int>(boost::num_vertices(impl_->g)); }

// Kahn's algorithm, always taking the lowest ready id, so the order is deterministic and
// follows creation order where the graph allows (A before B, ops as written).
std::vector<int> Dag::topological_order() const {
  std::vector<size_t> pending(boost::num_vertices(impl_->g));
  std::set<size_t> ready;
  for (size_t v = 0; v < pending.size(); ++v) {
    pending[v] = boost::in_degree(v, impl_->g);
    if (pending[v] == 0) ready.insert(v);
  }
  std::vector<int> order;
  while (!ready.empty()) {
    size_t v = *ready.begin();
    ready.erase(ready.begin());
    order.push_back(static_cast<int>(v));
    for (auto [it, end] = boost::out_edges(v, impl_->g); it != end; ++it)
      if (--pending[boost::target(*it, impl_->g)] == 0) ready.insert(boost::target(*it, impl_->g));
  }
  GG_INTERNAL_CHECK(order.size() == pending.size(), "the definition graph has a cycle");
  return order;
}

std::vector<int> Dag::producers(int node) const {
  std::vector<int> out;
  for (auto [it, end] = boost::in_edges(static_cast<size_t>(node), impl_->g); it != end; ++it)
    out.push_back(static_cast<int>(boost::source(*it, impl_->g)));
  return out;
}

std::vector<int> Dag::consumers(int node) const {
  std::vector<int> out;
  for (auto [it, end] = boost::out_edges(static_cast<size_t>(node), impl_->g); it != end; ++it)
    out.push_back(static_cast<int>(boost::target(*it, impl_->g)));
  return out;
}

bool Dag::reaches(int from, int to) const {
  std::vector<boost::default_color_type> color(boost::num_vertices(impl_->g));
  auto colors = boost::make_iterator_property_map(color.begin(), boost::get(boost::vertex_index, impl_->g));
  boost::breadth_first_search(impl_->g, static_cast<size_t>(from), boost::color_map(colors));
  return color[static_cast<size_t>(to)] != boost::white_color;
}

}  // namespace gg
