#include "tensor_map.h"

#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled
#include <cuda_runtime.h>

namespace provision::kernels::detail {
namespace {

using EncodeTiled = PFN_cuTensorMapEncodeTiled_v12000;

// The driver's encoder, or nullptr where the driver has none (older than
// CUDA 12); looked up once.
EncodeTiled tensor_map_encoder() {
    static const EncodeTiled encoder = [] {
        void* fn = nullptr;
        cudaDriverEntryPointQueryResult found{};
        if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found) !=
                cudaSuccess ||
            found != cudaDriverEntryPointSuccess)
            return EncodeTiled{nullptr};
        return reinterpret_cast<EncodeTiled>(fn);
    }();
    return encoder;
}

}  // namespace

cudaError_t encode_tensor_map_sw128(CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank, const void* data,
                                    const cuuint64_t* dims, const cuuint64_t* byte_strides, const cuuint32_t* box) {
    constexpr cuuint32_t kElementStrides[5] = {1, 1, 1, 1, 1};  // the encoder takes up to 5 dimensions
    if (rank < 1 || rank > 5) return cudaErrorInvalidValue;
    const EncodeTiled encode = tensor_map_encoder();
    if (encode == nullptr) return cudaErrorNotSupported;
    const CUresult r = encode(map, type, rank, const_cast<void*>(data), dims, byte_strides, box, kElementStrides,
                              CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    return r == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t encode_matrix_sw128(CUtensorMap* map, CUtensorMapDataType type, int element_bytes, const void* data,
                                int rows, int cols, int box_cols, int box_rows) {
    const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
    const cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols) * static_cast<cuuint64_t>(element_bytes)};
    const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_cols), static_cast<cuuint32_t>(box_rows)};
    return encode_tensor_map_sw128(map, type, 2, data, dims, strides, box);
}

}  // namespace provision::kernels::detail
