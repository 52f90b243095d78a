#include "buffer_kernels.h"

namespace provision::kernels {
namespace {

constexpr int kThreads = 256;
constexpr int kBlocks = 1024;

// The word a source writes at an offset: a hash of both, never zero.
__device__ std::uint64_t pattern_word(int source_id, std::uint64_t index) {
    std::uint64_t x = index * 0x9E3779B97F4A7C15ull + static_cast<std::uint64_t>(source_id + 1) * 0xD1B54A32D192ED03ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return (x ^ (x >> 31)) | 1;
}

__global__ void fill_pattern(std::uint64_t* words, std::uint64_t count, int source_id) {
    for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)
        words[i] = pattern_word(source_id, i);
}

__global__ void verify_pattern(const std::uint64_t* words, std::uint64_t count, int source_id,
                               unsigned long long* wrong, unsigned long long* first_wrong) {
    for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x) {
        if (words[i] != pattern_word(source_id, i)) {
            atomicAdd(wrong, 1ull);
            atomicMin(first_wrong, static_cast<unsigned long long>(i));
        }
    }
}

__global__ void fill_value(float* data, std::size_t count, float value) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        data[i] = value;
}

__global__ void count_wrong(const float* data, std::size_t count, float expected, unsigned long long* wrong) {
    for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
         i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
        if (data[i] != expected) atomicAdd(wrong, 1ull);
}

}  // namespace

cudaError_t launch_fill_pattern(std::uint64_t* words, std::uint64_t count, int source_id, cudaStream_t stream) {
    fill_pattern<<<kBlocks, kThreads, 0, stream>>>(words, count, source_id);
    return cudaGetLastError();
}

cudaError_t launch_verify_pattern(const std::uint64_t* words, std::uint64_t count, int source_id,
                                  unsigned long long* wrong, cudaStream_t stream) {
    verify_pattern<<<kBlocks, kThreads, 0, stream>>>(words, count, source_id, wrong, wrong + 1);
    return cudaGetLastError();
}

cudaError_t launch_fill_value(float* data, std::size_t count, float value, cudaStream_t stream) {
    fill_value<<<kBlocks, kThreads, 0, stream>>>(data, count, value);
    return cudaGetLastError();
}

cudaError_t launch_count_wrong(const float* data, std::size_t count, float expected, unsigned long long* wrong,
                               cudaStream_t stream) {
    count_wrong<<<kBlocks, kThreads, 0, stream>>>(data, count, expected, wrong);
    return cudaGetLastError();
}

}  // namespace provision::kernels
