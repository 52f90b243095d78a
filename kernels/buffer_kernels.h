// The kernels of the link checks (src/worker/cuda/): they fill the buffers
// that travel between GPUs and count the words that arrived wrong.  Each
// launcher queues its kernel on `stream` and returns cudaGetLastError().
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace provision::kernels {

// Fills `count` words with the pattern of `source_id`: word i a hash of
// both, never zero, so a buffer of zeros, one of another source, or a copy
// shifted by any number of words never holds it.
cudaError_t launch_fill_pattern(std::uint64_t* words, std::uint64_t count, int source_id, cudaStream_t stream);

// Counts the words of `words` that differ from the pattern of `source_id`
// into wrong[0] and keeps the lowest such index in wrong[1] (which the
// caller sets to ~0 beforehand).
cudaError_t launch_verify_pattern(const std::uint64_t* words, std::uint64_t count, int source_id,
                                  unsigned long long* wrong, cudaStream_t stream);

// Sets `count` floats to `value`.
cudaError_t launch_fill_value(float* data, std::size_t count, float value, cudaStream_t stream);

// Adds to *wrong the number of the `count` floats that are not `expected`.
cudaError_t launch_count_wrong(const float* data, std::size_t count, float expected, unsigned long long* wrong,
                               cudaStream_t stream);

}  // namespace provision::kernels
