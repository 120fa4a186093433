#pragma once
// The loop nests a schedule implies, as data: a small tree per warp role of loops (extent,
// binding, circular-buffer annotation) and leaf statements (operand loads, the MMA over a
// tile, the epilogue). Under warp specialization the producer and the consumer get separate
// nests (DESIGN.md rule 3): the producer may merge the tile and k loops into one stream of
// k tiles; the consumer keeps them apart because its epilogue runs between tiles.
//
// This is the structure before synchronization is inserted; explain() prints it and code
// generation reads the same shape.
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "codegen/roles_and_layouts.h"
#include "dsl/schedule.h"

namespace gg {

struct NestLoop {
  std::vector<std::string> axes;  // one axis; a merged loop (the producer's tile x k stream) lists several
  std::vector<int64_t> extents;   // per axis
  Binding binding = Binding::None;  // block.x/y/z, cluster, persistent, serial, unroll; None: unbound (only index 0 runs)
  std::optional<CircularBufferD> pipeline;  // on the circular-buffered k loop
  std::optional<PersistD> persist;          // on the persistent tile loop
  int dealt = 1;                            // > 1: the iterations go in turn to this many consumer warpgroups
  int64_t extent() const;
};

// An operand tile copied from global into shared memory.
struct LoadStmt {
  std::string tensor;                 // "A"
  std::vector<std::string> index;     // tile coordinates: {"m_o", "k_o"}, {"tile.m", "k_o"}; "0" where untiled
  int64_t rows = 0, cols = 0;         // the tile, in elements
  CopyMethod method = CopyMethod::Sync;
  bool element_copy = false;  // a synchronous copy of rows not 16-byte aligned: one load per element
  int stages = 1;                     // > 1: into stage `stage_index` of a circular buffer
  std::string stage_index;            // "k_o % 4"
  int multicast_ctas = 0;             // > 0: one TMA load multicast to this many CTAs of the cluster
  bool pair_half = false;             // a CTA pair's B: this CTA's half, completing on the even CTA's barrier
};

// The tensor-core work on one k tile: the instruction repeated over the (sub-)tile.
struct MmaStmt {
  std::optional<MmaD> mma;            // nullopt until the schedule chooses an instruction
  int64_t tile_m = 0, tile_n = 0, tile_k = 0;  // the part one issuing warpgroup covers
  int64_t rep_m = 1, rep_n = 1, rep_k = 1;     // instruction repeats along m, n, k
  int warpgroups = 1;                 // consumer warpgroups each doing this on their part
  std::string warpgroup_axis;         // the axis bound to warpgroup, if any
  Place accumulator = Place::Registers;
};

// The writeback of one output tile.
struct EpilogueStmt {
  struct Op {
    std::string name;                 // "relu", "add_c", "cast"
    std::string detail;               // "x 2", "+ 0.5 x C", "-> bf16", "@ n_i" (compute_at)
    bool applied = true;              // false: neither inlined nor computed at a loop
  };
  std::vector<Op> ops;
  Place from = Place::Registers;      // the accumulator: registers or tmem
  bool staged = false;                // through shared memory (cache_write OUT shared)
  int64_t subtile_cols = 0;           // store_subtile: columns per subtile (0: the whole tile at once)
  int subtile_buffers = 1;            // ... and staging buffers per consumer warpgroup
  CopyMethod store = CopyMethod::Sync;
  std::string output;                 // the output tensor
  std::vector<std::string> index;     // {"m_o", "n_o"}
};

struct NestNode {
  std::variant<NestLoop, LoadStmt, MmaStmt, EpilogueStmt> item;
  std::vector<NestNode> body;         // loops only
};

struct RoleNest {
  RoleShape shape;                    // the analysis's role: warpgroups, threads, setmaxnreg
  std::vector<NestNode> body;
  std::string warp;                   // one warp of the role runs this nest ("" for the whole role)
};

struct LoopNests {
  Target target = Target::Sm90a;
  int64_t tile_m = 0, tile_n = 0, tile_k = 0;
  ClusterD cluster{1, 1, 1};
  std::vector<RoleNest> roles;        // {all} or {producer, consumer}
};

// The nests of `roles` (role_shapes(s, ...); analyze_schedule passes its own).
LoopNests make_loop_nests(const Schedule& s, const std::vector<RoleShape>& roles);

// Indented text, one loop or statement per line.
std::string print_loop_nests(const LoopNests& nests);
std::string print_nest_node(const NestNode& node);  // the node's own line, without its body

}  // namespace gg
