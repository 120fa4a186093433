#pragma once
// The simulated machine's state: global tensors, each CTA's shared memory (with what the
// hazard checks need to know per byte) and its mbarriers, and the asynchronous copies in
// flight. The interpreter (simulate.cpp) drives it; nothing here knows the IR's control flow.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "codegen/kernel.h"
#include "runtime/launch_spec.h"

namespace gg::sim {

// A shared-memory byte offset (from the 1024-aligned base) as the hardware's address-based
// swizzle places it: bits [4, 4 + log2(swizzle / 16)) XOR bits [7, ...). 0 = no swizzle.
int64_t swizzled(int64_t offset, int swizzle_bytes);
int swizzle_bytes_of(rt::Swizzle s);

// Stored matrices in global memory, in their element type: `batches` matrices `batch_stride`
// elements apart, each rows x cols elements, cols contiguous, rows `ld` elements apart (the
// padding between holds poison, which a kernel must neither read into a result nor overwrite).
struct GlobalTensor {
  rt::ElemType elem = rt::ElemType::BF16;
  int64_t rows = 0, cols = 0, ld = 0, batches = 1, batch_stride = 0;
  std::vector<uint8_t> data;
  int bytes() const { return rt::elem_bytes(elem); }
  int64_t offset(int64_t r, int64_t c, int64_t b = 0) const { return (b * batch_stride + r * ld + c) * bytes(); }
  // rows x cols, `stride` elements between rows (at least cols), every element poison.
  void allocate(int64_t rows, int64_t cols, int64_t stride, int64_t batches = 1, int64_t batch_stride = 0);
  float get(int64_t r, int64_t c, int64_t b = 0) const;
  void set(int64_t r, int64_t c, float v, int64_t b = 0);  // rounds to the element type
  bool is_poison(int64_t r, int64_t c, int64_t b = 0) const;
  // Whether element `i` of the allocation lies in a matrix (else it is padding between rows or matrices).
  std::vector<bool> in_matrices() const;
  void poison();
};

float decode(rt::ElemType t, const uint8_t* p);
void encode(rt::ElemType t, float v, uint8_t* p);

struct Mbarrier {
  bool initialized = false, fenced = false;
  bool published = false;      // a CTA or cluster barrier ordered the init before other users
  int64_t published_in = -1;   // the cluster barrier's phase that did (-1: a CTA barrier, which every warp waited at)
  int init_warp = -1;
  int count = 0, pending = 0;  // arrivals a phase needs, and still missing in this one
  int64_t tx = 0;              // transaction bytes still expected in this phase
  int64_t phase = 0;           // the phase in progress; parity p has completed when phase % 2 != p
  void arrive();
  void complete_tx(int64_t bytes);
  std::string describe() const;
};

// An asynchronous reader of shared memory (a wgmma group, a TMA store) and the bytes it covers.
struct AsyncRead {
  int64_t lo = 0, hi = 0;
  int warp = 0;
  int64_t group = 0;
  std::string what;
};

struct SharedMemory {
  std::vector<uint8_t> bytes;
  std::vector<int32_t> pending_fill;  // the TMA load that will write the byte (0: none)
  std::vector<int16_t> unfenced_by;   // warp + 1 whose generic write is not yet fenced (0: none)
  // The barrier and phase whose completion made a TMA-written byte visible: a reader must
  // have seen that phase complete (waited on it), not merely run after the bytes landed.
  std::vector<int64_t> filled_by, filled_in_phase;
  std::map<int64_t, Mbarrier> barriers;
  std::vector<AsyncRead> readers;     // wgmma groups and TMA stores still reading
  explicit SharedMemory(int64_t size = 0)
      : bytes(static_cast<size_t>(size), 0xA5), pending_fill(static_cast<size_t>(size), 0),
        unfenced_by(static_cast<size_t>(size), 0), filled_by(static_cast<size_t>(size), -1),
        filled_in_phase(static_cast<size_t>(size), 0) {}
  const AsyncRead* reader_of(int64_t lo, int64_t hi) const;
  void retire_readers(int warp, int64_t below_group, const std::string& kind);
};

// A TMA load in flight: the bytes it will write (already swizzled positions) into one CTA.
struct PendingLoad {
  int id = 0;
  int cta = 0;
  int bar_cta = 0;  // the CTA whose barrier the bytes complete on (a CTA pair's: the leader's)
  std::vector<std::pair<int64_t, uint8_t>> writes;
  int64_t barrier = 0, bytes = 0;
  std::string what;
};

// A TMA store in flight: reads the box from shared memory when it completes.
struct PendingStore {
  int cta = 0, warp = 0;
  int64_t group = 0;
  const rt::TensorMapSpec* map = nullptr;
  int64_t src = 0, row = 0, col = 0, batch = 0;
  int64_t lo = 0, hi = 0;
};

// A CTA's Tensor Memory (sm_100a): 128 lanes x 512 columns of 32-bit cells, fp32 accumulators
// here, each with the tcgen05.mma that last wrote it.
struct TensorMemory {
  static constexpr int kLanes = 128, kColumns = 512;
  bool allocated = false, freed = false;
  int alloc_warp = -1, columns = 0;
  int64_t alloc_generation = 0;   // the CTA barrier generation when it was allocated
  std::vector<float> cells;     // kLanes x kColumns once allocated (sm_90a kernels never pay for it)
  std::vector<int32_t> writer;  // the tcgen05.mma that last wrote a cell, 0: none
  size_t at(int64_t lane, int64_t column) const { return size_t(lane * kColumns + column); }
};

// A tcgen05.mma in flight: it reads shared memory and writes TMEM when it completes.
struct PendingMma {
  int id = 0, cta = 0, warp = 0;
  uint64_t a_desc = 0, b_desc = 0;
  uint32_t idesc = 0, d_tmem = 0;
  bool accumulate = false;
  bool pair = false;  // .cta_group::2: rows 128.. of A and D and B's second half are CTA cta + 1's
  // tcgen05.cp (a_desc: its source, d_tmem: its first column), in the same queue as the MMAs, which
  // run after the copies their thread issued before them.
  bool copy = false;
  // .kind::mxf8f6f4.block_scale: A's and B's UE8M0 factors from TMEM at these addresses
  bool scaled = false;
  uint32_t a_scales = 0, b_scales = 0;
  std::string what;
};

// A tcgen05.commit waiting for the MMAs it tracks (the issuing warp's, up to id `up_to`); then one
// arrival on the barrier at `barrier`. Once arrived: the phase it arrived in.
struct PendingCommit {
  int cta = 0, warp = 0, up_to = 0;
  int64_t barrier = 0, phase = 0;
  unsigned multicast_mask = 0;  // arrives in these CTAs of the cluster (0: the issuing one)
};

}  // namespace gg::sim
