#include "schedules/tutorial.h"

#include "codegen/device_limits.h"
#include "dsl/error.h"
#include "dsl/schedule_text.h"
#include "runtime/device/tile_order.h"
#include "schedules/auto_schedule.h"
#include "schedules/config.h"

namespace gg {

namespace {

// v1: one 128x128x64 tile; operands reach shared memory by a synchronous copy (the default
// without cache_read), one MMA instruction shape, the epilogue applied in the writeback.
// v10 builds on a 128x256 tile instead (see two_consumers). A k tile is one 128-byte row of
// each operand (64 bf16 or f16 elements, 128 FP8 ones: one scale block), an MMA 32 bytes of K.
// FP8's promotion (sm_90a) holds a second accumulator of the tile: half the columns keep the
// registers. On sm_100a FP8 runs the block-scaled MMA, which is m128, into TMEM: tiles keep their
// columns, but v10's two 256-column buffers would leave no TMEM columns for the scale factors.
// `cta_pair` (sm_100a from v9, as TIRx's step 9): the MMA is m256 over a CTA pair, each CTA's
// tile its 128 rows of it.
void one_tile(Schedule& s, Target target, int64_t tile_n, bool cta_pair) {
  const int in_bytes = dtype_bytes(s.definition().input_dtype());
  const bool fp8 = dtype_is_fp8(s.definition().input_dtype()), block_scaled = fp8 && target == Target::Sm100a;
  if (fp8 && (!block_scaled || tile_n > 128)) tile_n /= 2;
  s.tile(128, tile_n, 128 / in_bytes);
  for (int op : s.definition().epilogue()) s.inline_op(s.definition().node(op).name);
  s.mma(cta_pair ? 256 : block_scaled ? 128 : 64, static_cast<int>(tile_n), 32 / in_bytes, target);
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
// neighbouring m tiles; an odd number of m tiles gives the last pair a tile past M. With an m256
// tcgen05.mma (sm_100a) the pair shares B through the MMA instead: each CTA loads half of the tile,
// and the even CTA's MMA reads both halves.
void cta_pair(Schedule& s) {
  s.cluster(2, 1, 1);
  if (s.mma_shape()->m != 256) s.multicast(second_operand(s.definition()));
}

// Two consumer warpgroups, each owning 64 rows of the 128-row tile. v10 runs them on a 128x256
// tile (each consumer a 64x256 accumulator, 128 registers): a 128x128 tile split in two left
// each warpgroup too little MMA work per stage to hide a stage's load (0.84x cuBLAS at 8192^3
// on an H100, against 0.94x for 128x256). Each warpgroup stores its rows in subtiles one
// 128-byte swizzle atom wide through two staging buffers: the staging shrinks from the whole
// tile to 4 subtiles' worth, which leaves room for a fourth stage (the whole 128x256 tile
// staged left three). On sm_100a the accumulator lives in TMEM, and TIRx's step 10 gives it two
// buffers (2 x 256 of TMEM's 512 columns): the producer warpgroup's MMA warp fills one while the
// two warpgroups write the other back, so a tile's writeback overlaps the next tile's MMAs.
void two_consumers(Schedule& s) {
  s.split("m_i", 64, "m_wg", "m_mma");
  s.bind("m_wg", Binding::Warpgroup);
  atom_subtiles(s);
  deep_pipeline(s);
  if (s.mma_shape() && s.mma_shape()->target == Target::Sm100a) s.accumulator_buffers(2);
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
      {"v9", "v8 + a 2-CTA cluster with B multicast (sm_100a: one m256 MMA over the CTA pair)"},
      {"v10", "v9 + two consumer warpgroups, each 64x256 of a 128x256 tile, stored in subtiles (sm_100a: an MMA warp "
              "and two TMEM accumulator buffers)"},
      {"pingpong", "v9 + two consumer warpgroups taking whole 128x128 tiles in turn (ping-pong), stored in subtiles"},
      {"symmetric", "D = A * A^T (--symmetric): v10's 128x256 tile without its cluster, the tiles below the "
                    "diagonal skipped, each subtile above it stored with its mirror"},
      {"auto", "the heuristic's config for the problem: tile, consumers, stages, cluster (schedules/auto_schedule.h)"},
  };
  return all;
}

namespace {

Schedule tutorial_steps(int version, const Definition& def, Target target, bool cta_pair_mma) {
  if (version < 1 || version > kTutorialSteps)
    throw_user_error("unknown-schedule", "tutorial step v" + std::to_string(version) + " does not exist; steps are v1..v10");
  Schedule s(def);
  using Step = void (*)(Schedule&);
  static const Step later_steps[] = {k_loop, grid_of_ctas, tma_loads_and_store, double_buffer, persistent_l2_order,
                                     warp_roles, deep_pipeline, cta_pair, two_consumers};
  one_tile(s, target, version >= 10 ? 256 : 128, cta_pair_mma);
  for (int v = 2; v <= version; ++v) later_steps[v - 2](s);
  return s;
}

}  // namespace

// On sm_100a, v9 and v10 run their pair's MMAs as one (m256, cta_group::2), FP8's block-scaled too.
Schedule tutorial_schedule(int version, const Definition& def, Target target) {
  return tutorial_steps(version, def, target, target == Target::Sm100a && version >= 9);
}

// The other consumer mode beside v10: v9's 128x128 tiles, each computed whole by one of two consumer
// warpgroups, which take the tiles in turn so one's epilogue runs under the other's MMAs. Each
// stores its tile in subtiles one swizzle atom wide, as v10 does: with an f32 output, staging two
// whole tiles (128 KB) left room for three stages and ran the fused gelu + C epilogue at 0.55x
// cuBLAS on an H100, subtiles at 0.83x.
Schedule ping_pong_schedule(const Definition& def, Target target) {
  Schedule s = tutorial_steps(9, def, target, false);  // each consumer issues its own MMAs
  s.ping_pong();
  atom_subtiles(s);
  deep_pipeline(s);
  return s;
}

namespace {

// D = A * A^T: the tutorial step's directives without a cluster (a pair's CTAs would not agree on
// which tiles they skip), walking the tiles on and above the diagonal first, stored by TMA (the
// mirror is a transposed staging). M (and N, which is M) is read at run time, so `auto` would
// store from registers; a launch checks that D's rows stay whole 16-byte pieces
// (rt::sizes_mismatch).
std::vector<Directive> symmetric_directives(const Definition& def, Target target, int version) {
  std::vector<Directive> directives;
  const std::string& out = def.node(def.output()).name;
  const Schedule step = tutorial_steps(version, def, target, false);
  for (Directive d : step.directives()) {
    if (std::holds_alternative<ClusterD>(d) || std::holds_alternative<MulticastD>(d)) continue;
    if (auto* persist = std::get_if<PersistD>(&d)) persist->raster = Raster::Triangle;
    if (auto* w = std::get_if<CacheWriteD>(&d); w && w->tensor == out && tma_rows_aligned(def, def.node(def.output())))
      w->method = CopyMethod::Tma;
    directives.push_back(d);
  }
  return directives;
}

}  // namespace

// Wide: v10's 128x256 tile over two consumer warpgroups (each 64x256, stored in 64x64 subtiles,
// so a subtile's mirror is a box of the same shape); a subtile below the diagonal (in a tile the
// diagonal crosses) is not stored, one above it is stored again, transposed, at its mirror.
// Square: v8's 128x128 tile on ping-pong consumers, each storing its tile whole (one 128-column
// subtile as tall as the warpgroup's rows) and again at its mirror off the diagonal.
Schedule symmetric_schedule(const Definition& def, Target target, SymmetricTile tile) {
  if (tile == SymmetricTile::Wide) {
    Schedule s = apply_directives(def, symmetric_directives(def, target, 10));
    s.symmetric();
    return s;
  }
  Schedule s = apply_directives(def, symmetric_directives(def, target, 8));
  s.ping_pong();
  s.store_subtile(128, 1);
  s.symmetric();
  return s;
}

// The wide tile runs at v10's rate, the square one at about 0.8x of it (H100, 8192^3 and 16384^3:
// 1.78x against 1.41-1.45x cuBLAS's full GEMM), but the wide one comes in half as many units,
// so its last wave can be the emptier: at 4096^3, 272 wide units fill 2.06 waves of 132 SMs and
// 528 square ones 4.0 (1.24x against 1.40x). The planned size's waves, each weighed by its
// tile's time, decide.
Schedule symmetric_schedule(const Definition& def, Target target) {
  constexpr double kSquareTileTime = 0.5 / 0.8;  // a wide tile's time is 1
  const int64_t sms = limits_for(target).sms, tiles = (def.m() + 127) / 128;
  const auto waves = [&](int64_t units) { return double((units + sms - 1) / sms); };
  const double wide = waves(gg::dev::triangle_computing(int(tiles), 2));
  const double square = waves(gg::dev::triangle_computing(int(tiles), 1)) * kSquareTileTime;
  return symmetric_schedule(def, target, wide <= square ? SymmetricTile::Wide : SymmetricTile::Square);
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
