#include "simulator/machine.h"

#include <cmath>
#include <cstring>

#include "dsl/error.h"
#include "runtime/device/smem_desc.h"
#include "runtime/host_dtype.h"

namespace gg::sim {

// The device's own function (runtime/device/smem_desc.h), so the simulator places bytes where
// the emitted kernels look for them; the XOR only touches bits 4..6, below any 32-bit overflow.
int64_t swizzled(int64_t offset, int swizzle_bytes) {
  const int64_t low = offset & 0xFFFFFFFF;
  return offset - low + gg::dev::swizzle_offset(static_cast<unsigned>(low), swizzle_bytes);
}

int swizzle_bytes_of(rt::Swizzle s) {
  switch (s) {
    case rt::Swizzle::B128: return 128;
    case rt::Swizzle::B64: return 64;
    case rt::Swizzle::B32: return 32;
    case rt::Swizzle::None: return 0;
  }
  return 0;
}

float decode(rt::ElemType t, const uint8_t* p) {
  if (t == rt::ElemType::F32) {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  if (t == rt::ElemType::E4M3) return rt::e4m3_value(*p);
  if (t == rt::ElemType::E5M2) return rt::e5m2_value(*p);
  uint16_t bits;
  std::memcpy(&bits, p, 2);
  return t == rt::ElemType::BF16 ? rt::bf16_value(bits) : rt::f16_value(bits);
}

void encode(rt::ElemType t, float v, uint8_t* p) {
  if (t == rt::ElemType::F32) {
    std::memcpy(p, &v, 4);
    return;
  }
  if (t == rt::ElemType::E4M3 || t == rt::ElemType::E5M2) {
    *p = t == rt::ElemType::E4M3 ? rt::e4m3_bits(v) : rt::e5m2_bits(v);
    return;
  }
  uint16_t bits = t == rt::ElemType::BF16 ? rt::bf16_bits(v) : rt::f16_bits(v);
  std::memcpy(p, &bits, 2);
}

void GlobalTensor::allocate(int64_t r, int64_t c, int64_t stride, int64_t matrices, int64_t matrix_stride) {
  rows = r;
  cols = c;
  ld = stride;
  batches = matrices;
  batch_stride = matrix_stride;
  data.assign(static_cast<size_t>(((batches - 1) * batch_stride + (rows - 1) * ld + cols) * bytes()), 0);
  poison();
}
float GlobalTensor::get(int64_t r, int64_t c, int64_t b) const { return decode(elem, data.data() + offset(r, c, b)); }
void GlobalTensor::set(int64_t r, int64_t c, float v, int64_t b) { encode(elem, v, data.data() + offset(r, c, b)); }
std::vector<bool> GlobalTensor::in_matrices() const {
  std::vector<bool> in(data.size() / static_cast<size_t>(bytes()), false);
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) in[static_cast<size_t>(offset(r, c, b) / bytes())] = true;
  return in;
}
bool GlobalTensor::is_poison(int64_t r, int64_t c, int64_t b) const {
  const uint8_t* p = data.data() + offset(r, c, b);
  for (int i = 0; i < bytes(); ++i)
    if (p[i] != 0xFF) return false;
  return true;
}
void GlobalTensor::poison() { std::fill(data.begin(), data.end(), uint8_t{0xFF}); }  // a NaN in every type

void Mbarrier::arrive() {
  --pending;
  if (pending == 0 && tx == 0) {
    ++phase;
    pending = count;
  }
}

void Mbarrier::complete_tx(int64_t bytes) {
  tx -= bytes;
  if (pending == 0 && tx == 0) {
    ++phase;
    pending = count;
  }
}

std::string Mbarrier::describe() const {
  if (!initialized) return "never initialized";
  return "in phase " + std::to_string(phase) + " (parity " + std::to_string(phase % 2) + "), " +
         std::to_string(pending) + " of " + std::to_string(count) + " arrivals missing, " + std::to_string(tx) +
         " transaction bytes outstanding";
}

const AsyncRead* SharedMemory::reader_of(int64_t lo, int64_t hi) const {
  for (const auto& r : readers)
    if (r.lo < hi && lo < r.hi) return &r;
  return nullptr;
}

void SharedMemory::retire_readers(int warp, int64_t below_group, const std::string& kind) {
  std::erase_if(readers, [&](const AsyncRead& r) { return r.warp == warp && r.what == kind && r.group < below_group; });
}

}  // namespace gg::sim
