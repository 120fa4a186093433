#pragma once
// The one adapter over Boost.Graph: the definition DAG. Nothing else includes Boost.
#include <memory>
#include <vector>

namespace gg {

class Dag {
 public:
  Dag();
  ~Dag();
  Dag(const Dag& other);
  Dag& operator=(const Dag& other);

  int add_node();                         // returns the new node's id (0, 1, ...)
  void add_edge(int producer, int consumer);
  int size() const;
  std::vector<int> topological_order() const;  // producers before consumers
  std::vector<int> producers(int node) const;
  std::vector<int> consumers(int node) const;
  bool reaches(int from, int to) const;   // a path from -> ... -> to exists (from == to counts)
  // Per node, whether reaches(from, node) / reaches(node, to), in one sweep.
  std::vector<bool> reached_from(int from) const;
  std::vector<bool> reaching(int to) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gg
