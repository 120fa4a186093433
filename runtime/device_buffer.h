#pragma once
// A typed device allocation (RAII) with host-side fills: values are generated on the
// host, rounded to the element type, uploaded, and returned, so a host reference
// sees exactly what the kernel reads.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/launch_spec.h"

namespace gg::rt {

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(ElemType type, size_t count);  // allocates; contents undefined
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* data() { return data_; }
  const void* data() const { return data_; }
  ElemType type() const { return type_; }
  size_t count() const { return count_; }
  size_t bytes() const { return count_ * static_cast<size_t>(elem_bytes(type_)); }

  // Converts each value to the element type (round to nearest even) and copies it up.
  void upload(const std::vector<float>& values);
  std::vector<float> download() const;

 private:
  void* data_ = nullptr;
  ElemType type_ = ElemType::F32;
  size_t count_ = 0;
};

// 32-bit integers in device memory (a masked problem's group rows), copied up at construction.
class DeviceInts {
 public:
  explicit DeviceInts(const std::vector<int>& values);
  ~DeviceInts();
  DeviceInts(const DeviceInts&) = delete;
  DeviceInts& operator=(const DeviceInts&) = delete;
  const int* data() const { return data_; }

 private:
  int* data_ = nullptr;
};

// Any host bytes in device memory (pointer-array groups' arrays of pointers and leading
// dimensions), copied up at construction.
class DeviceBytes {
 public:
  DeviceBytes(const void* host, size_t bytes);
  template <class T>
  explicit DeviceBytes(const std::vector<T>& values) : DeviceBytes(values.data(), values.size() * sizeof(T)) {}
  ~DeviceBytes();
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  template <class T>
  const T* as() const { return static_cast<const T*>(data_); }

 private:
  void* data_ = nullptr;
};

// Host values, already rounded to `type`. Deterministic for a seed on every platform.
std::vector<float> random_uniform_values(ElemType type, size_t count, uint64_t seed);  // in [-1, 1]
std::vector<float> small_integer_values(size_t count, uint64_t seed);                 // in {-2..2}

// Fill a buffer and return the host copy of what was uploaded.
std::vector<float> fill_random_uniform(DeviceBuffer& buffer, uint64_t seed);
std::vector<float> fill_small_integers(DeviceBuffer& buffer, uint64_t seed);

// Poison: a NaN bit pattern a kernel never computes (0x7FBADBAD for f32, 0x7FBA for
// bf16, 0x7DBA for f16), so elements a kernel failed to write can be counted.
uint32_t poison_bits(ElemType type);
void fill_poison(DeviceBuffer& buffer);
size_t count_poisoned(const DeviceBuffer& buffer);

// Same, on raw element bits as stored on the device (for host-side tests).
std::vector<uint8_t> poison_bytes(ElemType type, size_t count);
size_t count_poisoned_bytes(ElemType type, const std::vector<uint8_t>& bytes);

// Whether two downloads hold the same bits. Comparing values would not do: a padded output's
// padding keeps its NaN poison, and NaN != NaN, so equal results would compare different.
bool same_bits(const std::vector<float>& a, const std::vector<float>& b);

}  // namespace gg::rt
