// Tensor maps for the Hopper kernels' TMA copies (cp.async.bulk.tensor),
// encoded on the host by the driver's cuTensorMapEncodeTiled.  The program
// does not link libcuda: the encoder is looked up at run time through the
// CUDA runtime's driver entry points.  Internal to kernels/.
#pragma once

#include <cuda.h>  // CUtensorMap and its enums
#include <cuda_runtime_api.h>

namespace provision::kernels::detail {

// A tiled map over a `rank`-dimensional tensor at `data` (dimensions
// innermost first, the innermost contiguous) in the layout the wgmma kernels
// read: boxes of box[0] x ... elements, every element taken, 128-byte
// swizzle, 256-byte L2 promotion, zeros for elements outside the tensor.
// dims and box have `rank` entries, byte_strides rank - 1 (dimension 1 on).
// cudaErrorNotSupported when the driver has no encoder, cudaErrorInvalidValue
// when it refuses the layout.
cudaError_t encode_tensor_map_sw128(CUtensorMap* map, CUtensorMapDataType type, cuuint32_t rank, const void* data,
                                    const cuuint64_t* dims, const cuuint64_t* byte_strides, const cuuint32_t* box);

// The same for a row-major [rows, cols] matrix of `element_bytes` elements
// (the GEMMs' operands, K contiguous), in boxes of box_cols x box_rows.
cudaError_t encode_matrix_sw128(CUtensorMap* map, CUtensorMapDataType type, int element_bytes, const void* data,
                                int rows, int cols, int box_cols, int box_rows);

}  // namespace provision::kernels::detail
