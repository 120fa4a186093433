#include "schedules/tutorial.h"

#include "dsl/error.h"
#include "dsl/schedule_text.h"
#include "schedules/auto_schedule.h"
#include "schedules/config.h"

namespace gg {

namespace {

// v1: one 128x128x64 tile; operands reach shared memory by a synchronous copy (the default
// without cache_read), one MMA instruction shape, the epilogue applied in the writeback.
// v10 builds on a 128x256 tile instead (see two_consumers). A k tile is one 128-byte row of
// each operand (64 bf16 or f16 elements, 128 FP8 ones: one scale block), an MMA 32 bytes of K.
// FP8's promotion holds a second accumulator of the tile: half the columns keep the registers.
void one_tile(Schedule& s, Target target, int64_t tile_n) {
  const int in_bytes = dtype_bytes(s.definition().input_dtype());
  if (dtype_is_fp8(s.definition().input_dtype())) tile_n /= 2;
  s.tile(128, tile_n, 128 / in_bytes);
  for (int op : s.definition().epilogue()) s.inline_op(s.definition().node(op).name);
  s.mma(64, static_cast<int>(tile_n), 32 / in_bytes, target);
}

void k_loop(Schedule& s) { s.bind("k_o", Binding::Serial); }

void grid_of_ctas(Schedule& s) {
  s.bind("m_o", Binding::BlockY);
  s.bind("n_o", Binding::BlockX);
}

// TMA where the tensor's rows allow it; otherwise `auto` (copy_method_for), which falls back (a
// synchronous element copy for A and B when K is not a multiple of 8, stores from registers when
// N is not), so every step takes every problem and explain says what each copy became.
void tma_loads_and_store(Schedule& s) {
  const Definition& def = s.definition();
  cache_read_operands(s);
  const std::string& out = def.node(def.output()).name;
  s.cache_write(out, Place::Shared, copy_method_for(def, out));
}

int64_t k_trips(const Schedule& s) { return s.domain().axis("k_o").extent; }

void double_buffer(Schedule& s) { s.circular_buffer("k_o", pipeline_stages(k_trips(s), 2)); }

void persistent_l2_order(Schedule& s) { s.persist("m_o", "n_o", Raster::RowMajor, 8); }

// Each consumer stores its rows in subtiles one 128-byte swizzle atom wide through two buffers (one
// where the tile is a single subtile wide: FP8's halved tiles).
void atom_subtiles(Schedule& s) {
  const int64_t cols = 128 / dtype_bytes(s.definition().output_dtype());
  s.store_subtile(cols, s.domain().tile_extent(Root::N) > cols ? 2 : 1);
}

// Producer warpgroup trimmed to 40 registers, consumer raised to 232.
void warp_roles(Schedule& s) { s.warp_specialize(40, 232); }

// Four stages, or as many as shared memory holds beside the epilogue staging.
void deep_pipeline(Schedule& s) { s.circular_buffer("k_o", deepest_pipeline(s, "k_o", 4)); }

// Two CTAs along m share each B tile: one TMA load multicast to both. The pair takes
// neighbouring m tiles; an odd number of m tiles gives the last pair a tile past M.
void cta_pair(Schedule& s) {
  s.cluster(2, 1, 1);
  s.multicast(second_operand(s.definition()));
}

// Two consumer warpgroups, each owning 64 rows of the 128-row tile. v10 runs them on a 128x256
// tile (each consumer a 64x256 accumulator, 128 registers): a 128x128 tile split in two left
// each warpgroup too little MMA work per stage to hide a stage's load (0.84x cuBLAS at 8192^3
// on an H100, against 0.94x for 128x256). Each warpgroup stores its rows in subtiles one
// 128-byte swizzle atom wide through two staging buffers: the staging shrinks from the whole
// tile to 4 subtiles' worth, which leaves room for a fourth stage (the whole 128x256 tile
// staged left three).
void two_consumers(Schedule& s) {
  s.split("m_i", 64, "m_wg", "m_mma");
  s.bind("m_wg", Binding::Warpgroup);
  atom_subtiles(s);
  deep_pipeline(s);
}

}  // namespace

const std::vector<BuiltinSchedule>& builtin_schedules() {
  static const std::vector<BuiltinSchedule> all = {
      {"v1", "one 128x128x64 tile, synchronous copy, one MMA"},
      {"v2", "v1 + a serial k loop"},
      {"v3", "v2 + a grid of CTAs (m_o -> block.y, n_o -> block.x)"},
      {"v4", "v3 + TMA loads and a TMA-store writeback through shared memory"},
      {"v5", "v4 + a 2-stage circular buffer on the k loop"},
      {"v6", "v5 + a persistent tile loop in grouped (L2-friendly) row-major order"},
      {"v7", "v6 + warp specialization: TMA producer (40 regs), MMA consumer (232 regs)"},
      {"v8", "v7 + a 4-stage pipeline"},
      {"v9", "v8 + a 2-CTA cluster with B multicast"},
      {"v10", "v9 + two consumer warpgroups, each 64x256 of a 128x256 tile, stored in subtiles"},
      {"pingpong", "v9 + two consumer warpgroups taking whole 128x128 tiles in turn (ping-pong), stored in subtiles"},
      {"symmetric", "D = A * A^T (--symmetric): v8's 128x128 tile over two consumer warpgroups, the tiles below the "
                    "diagonal skipped, each one above stored with its mirror"},
      {"auto", "the heuristic's config for the problem: tile, consumers, stages, cluster (schedules/auto_schedule.h)"},
  };
  return all;
}

Schedule tutorial_schedule(int version, const Definition& def, Target target) {
  if (version < 1 || version > kTutorialSteps)
    throw_user_error("unknown-schedule", "tutorial step v" + std::to_string(version) + " does not exist; steps are v1..v10");
  Schedule s(def);
  using Step = void (*)(Schedule&);
  static const Step later_steps[] = {k_loop, grid_of_ctas, tma_loads_and_store, double_buffer, persistent_l2_order,
                                     warp_roles, deep_pipeline, cta_pair, two_consumers};
  one_tile(s, target, version >= 10 ? 256 : 128);
  for (int v = 2; v <= version; ++v) later_steps[v - 2](s);
  return s;
}

// The other consumer mode beside v10: v9's 128x128 tiles, each computed whole by one of two consumer
// warpgroups, which take the tiles in turn so one's epilogue runs under the other's MMAs. Each
// stores its tile in subtiles one swizzle atom wide, as v10 does: with an f32 output, staging two
// whole tiles (128 KB) left room for three stages and ran the fused gelu + C epilogue at 0.55x
// cuBLAS on an H100, subtiles at 0.83x.
Schedule ping_pong_schedule(const Definition& def, Target target) {
  Schedule s = tutorial_schedule(9, def, target);
  s.ping_pong();
  atom_subtiles(s);
  deep_pipeline(s);
  return s;
}

// D = A * A^T: v8's 128x128 tile, each of two ping-pong consumer warpgroups computing its own
// tile and storing it whole (a 128-column subtile, as tall as the warpgroup's rows, so the
// mirror's box is the tile's); the tiles below the diagonal are skipped and each one above is
// stored again, transposed, at its mirror. No cluster: a pair's CTAs would not agree on which tiles
// they skip. On an H100 at 8192^3 the ping-pong consumers ran 1.53-1.62x cuBLAS's full GEMM, two
// consumers sharing a tile 1.47-1.50x (docs/performance.md).
Schedule symmetric_schedule(const Definition& def, Target target) {
  // v8's directives with the persistent walk over the upper triangle first (every CTA an even
  // share of the tiles that compute).
  std::vector<Directive> directives = tutorial_schedule(8, def, target).directives();
  const std::string& out = def.node(def.output()).name;
  for (Directive& d : directives) {
    if (auto* persist = std::get_if<PersistD>(&d)) persist->raster = Raster::Triangle;
    // The mirror needs the TMA store. M (and N, which is M) is read at run time, so `auto` would
    // store from registers; a launch checks that D's rows stay whole 16-byte pieces
    // (rt::sizes_mismatch).
    if (auto* w = std::get_if<CacheWriteD>(&d); w && w->tensor == out && tma_rows_aligned(def, def.node(def.output())))
      w->method = CopyMethod::Tma;
  }
  Schedule s = apply_directives(def, directives);
  s.ping_pong();
  s.store_subtile(128, 1);
  s.symmetric();
  return s;
}

Schedule builtin_schedule(const std::string& name, const Definition& def, Target target) {
  for (int v = 1; v <= kTutorialSteps; ++v)
    if (name == "v" + std::to_string(v)) return tutorial_schedule(v, def, target);
  if (name == "pingpong") return ping_pong_schedule(def, target);
  if (name == "symmetric") return symmetric_schedule(def, target);
  if (name == "auto") return auto_schedule(def, choose_auto_params(def, limits_for(target)), target);
  std::string names;
  for (const auto& b : builtin_schedules()) names += (names.empty() ? "" : ", ") + b.name;
  throw_user_error("unknown-schedule", "unknown schedule '" + name + "': built-in schedules are " + names +
                   " (or pass --schedule-file FILE)");
}

}  // namespace gg
