#include "runtime/device_buffer.h"

#include <algorithm>

#include <cuda_runtime_api.h>

#include <cstring>
#include <string>
#include <utility>

#include "runtime/cuda_error.h"
#include "runtime/host_dtype.h"
#include "runtime/parallel_chunks.h"

namespace gg::rt {
namespace {

constexpr size_t kChunk = size_t{1} << 20;  // values per thread, at least

// splitmix64: a tiny generator whose output is the same on every platform. Its i-th output
// (from 0) is random_at(seed, i), so the values can be generated in parallel.
uint64_t random_at(uint64_t seed, size_t i) {
  uint64_t z = seed + 0x9e3779b97f4a7c15ull * (static_cast<uint64_t>(i) + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::vector<uint8_t> encode(ElemType type, const std::vector<float>& values) {
  const auto width = static_cast<size_t>(elem_bytes(type));
  std::vector<uint8_t> bytes(values.size() * width);
  for_each_chunk(values.size(), kChunk, [&](size_t first, size_t last) {
    for (size_t i = first; i < last; ++i) {
      if (type == ElemType::F32) {
        std::memcpy(&bytes[i * width], &values[i], width);
      } else if (elem_is_fp8(type)) {
        bytes[i] = type == ElemType::E4M3 ? e4m3_bits(values[i]) : e5m2_bits(values[i]);
      } else {
        const uint16_t bits = type == ElemType::BF16 ? bf16_bits(values[i]) : f16_bits(values[i]);
        std::memcpy(&bytes[i * width], &bits, width);
      }
    }
  });
  return bytes;
}

std::vector<float> decode(ElemType type, const std::vector<uint8_t>& bytes) {
  const auto width = static_cast<size_t>(elem_bytes(type));
  std::vector<float> values(bytes.size() / width);
  for_each_chunk(values.size(), kChunk, [&](size_t first, size_t last) {
    for (size_t i = first; i < last; ++i) {
      if (type == ElemType::F32) {
        std::memcpy(&values[i], &bytes[i * width], width);
      } else if (elem_is_fp8(type)) {
        values[i] = type == ElemType::E4M3 ? e4m3_value(bytes[i]) : e5m2_value(bytes[i]);
      } else {
        uint16_t bits = 0;
        std::memcpy(&bits, &bytes[i * width], width);
        values[i] = type == ElemType::BF16 ? bf16_value(bits) : f16_value(bits);
      }
    }
  });
  return values;
}

std::vector<uint8_t> download_bytes(const DeviceBuffer& buffer) {
  std::vector<uint8_t> bytes(buffer.bytes());
  check_cuda(cudaMemcpy(bytes.data(), buffer.data(), bytes.size(), cudaMemcpyDeviceToHost), "copying a buffer down");
  return bytes;
}

}  // namespace

DeviceBuffer::DeviceBuffer(ElemType type, size_t count) : type_(type), count_(count) {
  check_cuda(cudaMalloc(&data_, bytes()), "allocating " + std::to_string(bytes()) + " bytes of device memory");
}

DeviceInts::DeviceInts(const std::vector<int>& values) {
  const size_t bytes = std::max<size_t>(1, values.size()) * sizeof(int);
  check_cuda(cudaMalloc(reinterpret_cast<void**>(&data_), bytes), "allocating " + std::to_string(bytes) + " bytes of device memory");
  if (!values.empty())
    check_cuda(cudaMemcpy(data_, values.data(), values.size() * sizeof(int), cudaMemcpyHostToDevice), "copying integers up");
}

DeviceBytes::DeviceBytes(const void* host, size_t bytes) {
  check_cuda(cudaMalloc(&data_, std::max<size_t>(1, bytes)), "allocating " + std::to_string(bytes) + " bytes of device memory");
  if (bytes > 0) check_cuda(cudaMemcpy(data_, host, bytes, cudaMemcpyHostToDevice), "copying an array up");
}

DeviceBytes::~DeviceBytes() {
  if (data_ != nullptr) cudaFree(data_);
}

DeviceInts::~DeviceInts() {
  if (data_ != nullptr) cudaFree(data_);
}

DeviceBuffer::~DeviceBuffer() {
  if (data_ != nullptr) cudaFree(data_);
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), type_(other.type_), count_(std::exchange(other.count_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) cudaFree(data_);
    data_ = std::exchange(other.data_, nullptr);
    type_ = other.type_;
    count_ = std::exchange(other.count_, 0);
  }
  return *this;
}

void DeviceBuffer::upload(const std::vector<float>& values) {
  if (values.size() != count_) {
    throw CudaError("uploading " + std::to_string(values.size()) + " values into a buffer of " +
                    std::to_string(count_));
  }
  const std::vector<uint8_t> bytes = encode(type_, values);
  check_cuda(cudaMemcpy(data_, bytes.data(), bytes.size(), cudaMemcpyHostToDevice), "copying a buffer up");
}

std::vector<float> DeviceBuffer::download() const { return decode(type_, download_bytes(*this)); }

std::vector<float> random_uniform_values(ElemType type, size_t count, uint64_t seed) {
  std::vector<float> values(count);
  for_each_chunk(count, kChunk, [&](size_t first, size_t last) {
    for (size_t i = first; i < last; ++i) {
      const double unit = static_cast<double>(random_at(seed, i) >> 11) * 0x1.0p-53;  // [0, 1)
      values[i] = static_cast<float>(round_to(type, 2.0 * unit - 1.0));
    }
  });
  return values;
}

std::vector<float> small_integer_values(size_t count, uint64_t seed) {
  std::vector<float> values(count);
  for_each_chunk(count, kChunk, [&](size_t first, size_t last) {
    for (size_t i = first; i < last; ++i) values[i] = static_cast<float>(static_cast<int>(random_at(seed, i) % 5) - 2);
  });
  return values;
}

std::vector<float> fill_random_uniform(DeviceBuffer& buffer, uint64_t seed) {
  std::vector<float> values = random_uniform_values(buffer.type(), buffer.count(), seed);
  buffer.upload(values);
  return values;
}

std::vector<float> fill_small_integers(DeviceBuffer& buffer, uint64_t seed) {
  std::vector<float> values = small_integer_values(buffer.count(), seed);
  buffer.upload(values);
  return values;
}

uint32_t poison_bits(ElemType type) {
  switch (type) {
    case ElemType::F32: return 0x7FBADBADu;
    case ElemType::BF16: return 0x7FBAu;
    case ElemType::F16: return 0x7DBAu;
    case ElemType::E4M3:
    case ElemType::E5M2: return 0x7Fu;  // NaN in both FP8 formats
  }
  return 0;
}

std::vector<uint8_t> poison_bytes(ElemType type, size_t count) {
  const auto width = static_cast<size_t>(elem_bytes(type));
  const uint32_t bits = poison_bits(type);
  std::vector<uint8_t> bytes(count * width);
  for (size_t i = 0; i < count; ++i) std::memcpy(&bytes[i * width], &bits, width);  // little-endian low bytes
  return bytes;
}

size_t count_poisoned_bytes(ElemType type, const std::vector<uint8_t>& bytes) {
  const auto width = static_cast<size_t>(elem_bytes(type));
  const uint32_t bits = poison_bits(type);
  size_t poisoned = 0;
  for (size_t offset = 0; offset + width <= bytes.size(); offset += width) {
    poisoned += std::memcmp(&bytes[offset], &bits, width) == 0 ? 1 : 0;
  }
  return poisoned;
}

void fill_poison(DeviceBuffer& buffer) {
  const std::vector<uint8_t> bytes = poison_bytes(buffer.type(), buffer.count());
  check_cuda(cudaMemcpy(buffer.data(), bytes.data(), bytes.size(), cudaMemcpyHostToDevice), "poisoning a buffer");
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

size_t count_poisoned(const DeviceBuffer& buffer) {
  return count_poisoned_bytes(buffer.type(), download_bytes(buffer));
}

}  // namespace gg::rt
