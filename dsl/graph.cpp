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
  // A consumer nothing reads yet (a node being added) reaches only itself: no search needed.
  GG_INTERNAL_CHECK(producer != consumer && (boost::out_degree(static_cast<size_t>(consumer), impl_->g) == 0 ||
                                             !reaches(consumer, producer)),
                    "edge would make a cycle");
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

namespace {
// Marks every node reachable from `start` along `next` (out-edges or in-edges).
template <class Next>
std::vector<bool> sweep(size_t nodes, int start, Next next) {
  std::vector<bool> seen(nodes, false);
  std::vector<size_t> todo = {static_cast<size_t>(start)};
  seen[static_cast<size_t>(start)] = true;
  while (!todo.empty()) {
    const size_t v = todo.back();
    todo.pop_back();
    next(v, [&](size_t w) {
      if (!seen[w]) seen[w] = true, todo.push_back(w);
    });
  }
  return seen;
}
}  // namespace

std::vector<bool> Dag::reached_from(int from) const {
  const auto& g = impl_->g;
  return sweep(boost::num_vertices(g), from, [&](size_t v, auto visit) {
    for (auto [it, end] = boost::out_edges(v, g); it != end; ++it) visit(boost::target(*it, g));
  });
}

std::vector<bool> Dag::reaching(int to) const {
  const auto& g = impl_->g;
  return sweep(boost::num_vertices(g), to, [&](size_t v, auto visit) {
    for (auto [it, end] = boost::in_edges(v, g); it != end; ++it) visit(boost::source(*it, g));
  });
}

}  // namespace gg
