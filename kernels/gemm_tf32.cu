// C = A B^T on the TF32 tensor cores (mma.sync m16n8k8, sm_80+): block
// tiles of 128x256 (or 128x128 where shared memory is smaller), 32-deep k
// steps, a three-stage cp.async pipeline, warp tiles of 64x64.  Inputs are
// rounded to TF32 in registers (cvt.rna), as cuBLAS does; accumulation is
// fp32.  On Hopper, launch_gemm_tf32 hands over to the wgmma kernel in
// gemm_tf32_wgmma.cu.
#include <cuda_runtime.h>

#include <cstdint>
#include <string_view>

#include "kernel_launchers.h"
#include "kernel_loading.h"
#include "mma_primitives.cuh"

namespace provision::kernels::detail {
namespace {

// A tile shape, and where a k-tile's element lives in shared memory: a row
// of a tile is 32 floats = 8 chunks of 16 bytes, and the chunks are XOR-ed
// with the row so ldmatrix's eight rows hit eight bank groups.
template <int kBlockM_, int kBlockN_, int kWarpsM_, int kWarpsN_>
struct GemmTiles {
    static constexpr int kBlockM = kBlockM_;
    static constexpr int kBlockN = kBlockN_;
    static constexpr int kBlockK = 32;
    static constexpr int kWarpsM = kWarpsM_;
    static constexpr int kWarpsN = kWarpsN_;
    static constexpr int kThreads = kWarpsM * kWarpsN * 32;
    static constexpr int kWarpM = kBlockM / kWarpsM;
    static constexpr int kWarpN = kBlockN / kWarpsN;
    static constexpr int kMTiles = kWarpM / 16;
    static constexpr int kNTiles = kWarpN / 8;
    static constexpr int kStages = 3;
    static constexpr int kStageFloats = (kBlockM + kBlockN) * kBlockK;
    static constexpr int kSharedBytes = kStages * kStageFloats * 4;

    __device__ static __forceinline__ int swizzled(int row, int chunk) {
        return row * kBlockK + ((chunk ^ (row & 7)) << 2);
    }
};

// Rows [first_row, first_row + kRows) of a [rows, k] matrix, columns
// [k0, k0 + 32), zero-filled outside it.
template <typename Tiles, int kRows>
__device__ __forceinline__ void load_tile(float* shared, const float* global, int first_row, int rows, int k0, int k,
                                          int tid) {
    constexpr int kChunks = Tiles::kBlockK / 4;
#pragma unroll
    for (int i = 0; i < kRows * kChunks / Tiles::kThreads; ++i) {
        const int index = tid + i * Tiles::kThreads;
        const int row = index / kChunks;
        const int chunk = index % kChunks;
        const int global_row = first_row + row;
        const int column = k0 + chunk * 4;
        const bool valid = global_row < rows && column < k;
        const float* source = global + (valid ? static_cast<size_t>(global_row) * k + column : 0);
        copy_16_bytes(shared + Tiles::swizzled(row, chunk), source, valid);
    }
}

// Built for sm_75 too, where the TF32 mma traps: the host never launches it there.
template <typename Tiles>
__global__ void __launch_bounds__(Tiles::kThreads) gemm_tf32_kernel(const float* a, const float* b, float* c, int m,
                                                                    int n, int k, FaultKind fault) {
    if (planted(fault, FaultKind::hang)) spin_forever();
    extern __shared__ __align__(16) float shared[];
    const int tid = threadIdx.x;
    const int warp = tid / 32;
    const int lane = tid % 32;
    const int warp_m = warp / Tiles::kWarpsN;
    const int warp_n = warp % Tiles::kWarpsN;
    const int m0 = blockIdx.y * Tiles::kBlockM;
    const int n0 = blockIdx.x * Tiles::kBlockN;
    const int k_tiles = (k + Tiles::kBlockK - 1) / Tiles::kBlockK;

    auto load_stage = [&](int stage, int k_tile) {
        float* a_tile = shared + stage * Tiles::kStageFloats;
        load_tile<Tiles, Tiles::kBlockM>(a_tile, a, m0, m, k_tile * Tiles::kBlockK, k, tid);
        load_tile<Tiles, Tiles::kBlockN>(a_tile + Tiles::kBlockM * Tiles::kBlockK, b, n0, n, k_tile * Tiles::kBlockK,
                                         k, tid);
    };

    float acc[Tiles::kMTiles][Tiles::kNTiles][4] = {};
#pragma unroll
    for (int stage = 0; stage < Tiles::kStages - 1; ++stage) {
        if (stage < k_tiles) load_stage(stage, stage);
        copy_commit();
    }
    for (int k_tile = 0; k_tile < k_tiles; ++k_tile) {
        copy_wait<Tiles::kStages - 2>();  // this tile's stage has landed
        __syncthreads();                  // ... for all; and the stage refilled next is no longer read
        const int next = k_tile + Tiles::kStages - 1;
        if (next < k_tiles) load_stage(next % Tiles::kStages, next);
        copy_commit();

        const float* a_tile = shared + (k_tile % Tiles::kStages) * Tiles::kStageFloats;
        const float* b_tile = a_tile + Tiles::kBlockM * Tiles::kBlockK;
#pragma unroll
        for (int kk = 0; kk < Tiles::kBlockK / 8; ++kk) {
            std::uint32_t a_fragment[Tiles::kMTiles][4];
            std::uint32_t b_fragment[Tiles::kNTiles][2];
#pragma unroll
            for (int mt = 0; mt < Tiles::kMTiles; ++mt) {
                ldmatrix_x4(a_fragment[mt], shared_address(a_tile + Tiles::swizzled(warp_m * Tiles::kWarpM + mt * 16 +
                                                                                        (lane & 15),
                                                                                    kk * 2 + (lane >> 4))));
#pragma unroll
                for (int r = 0; r < 4; ++r) a_fragment[mt][r] = to_tf32(a_fragment[mt][r]);
            }
#pragma unroll
            for (int pair = 0; pair < Tiles::kNTiles / 2; ++pair) {
                std::uint32_t r[4];
                ldmatrix_x4(r, shared_address(b_tile + Tiles::swizzled(warp_n * Tiles::kWarpN + pair * 16 + (lane & 7) +
                                                                           ((lane >> 4) << 3),
                                                                       kk * 2 + ((lane >> 3) & 1))));
                b_fragment[2 * pair][0] = to_tf32(r[0]);
                b_fragment[2 * pair][1] = to_tf32(r[1]);
                b_fragment[2 * pair + 1][0] = to_tf32(r[2]);
                b_fragment[2 * pair + 1][1] = to_tf32(r[3]);
            }
#pragma unroll
            for (int mt = 0; mt < Tiles::kMTiles; ++mt)
#pragma unroll
                for (int nt = 0; nt < Tiles::kNTiles; ++nt)
                    mma_16x8x8_tf32(acc[mt][nt], a_fragment[mt], b_fragment[nt][0], b_fragment[nt][1]);
        }
    }

#pragma unroll
    for (int mt = 0; mt < Tiles::kMTiles; ++mt)
#pragma unroll
        for (int nt = 0; nt < Tiles::kNTiles; ++nt)
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const int row = m0 + warp_m * Tiles::kWarpM + mt * 16 + (lane >> 2) + half * 8;
                const int col = n0 + warp_n * Tiles::kWarpN + nt * 8 + 2 * (lane & 3);
                if (row >= m) continue;
                float first = acc[mt][nt][2 * half];
                const float second = acc[mt][nt][2 * half + 1];
                if (planted(fault, FaultKind::wrong_result) && row == 0 && col == 0) first += 64.f;
                float* out = c + static_cast<size_t>(row) * n + col;
                if (col + 1 < n && n % 2 == 0) {
                    *reinterpret_cast<float2*>(out) = make_float2(first, second);
                } else {
                    if (col < n) out[0] = first;
                    if (col + 1 < n) out[1] = second;
                }
            }
}

template <typename Tiles>
cudaError_t launch_tiles(const float* a, const float* b, float* c, int m, int n, int k, cudaStream_t stream,
                         FaultKind fault) {
    const auto kernel = gemm_tf32_kernel<Tiles>;
    if (cudaError_t status =
            cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Tiles::kSharedBytes);
        status != cudaSuccess)
        return status;
    if (loading_kernels()) return load_kernel(kernel);
    const dim3 grid((n + Tiles::kBlockN - 1) / Tiles::kBlockN, (m + Tiles::kBlockM - 1) / Tiles::kBlockM);
    kernel<<<grid, Tiles::kThreads, Tiles::kSharedBytes, stream>>>(a, b, c, m, n, k, fault);
    return cudaGetLastError();
}

// The wgmma kernel exists in builds that carry sm_90a code.
#if PROVISION_HAVE_WGMMA
constexpr bool kWgmmaBuilt = true;
cudaError_t launch_wgmma(const float* a, const float* b, float* c, int m, int n, int k, cudaStream_t stream,
                         FaultKind fault) {
    return launch_gemm_tf32_wgmma(a, b, c, m, n, k, stream, fault);
}
#else
constexpr bool kWgmmaBuilt = false;
cudaError_t launch_wgmma(const float*, const float*, float*, int, int, int, cudaStream_t, FaultKind) {
    return cudaErrorNotSupported;
}
#endif

bool aligned16(const void* pointer) { return reinterpret_cast<std::uintptr_t>(pointer) % 16 == 0; }

}  // namespace

const char* gemm_tf32_path(int major, int minor) {
    return kWgmmaBuilt && major == 9 && minor == 0 ? "wgmma" : "mma.sync";
}

cudaError_t launch_gemm_tf32(const float* a, const float* b, float* c, int m, int n, int k, cudaStream_t stream,
                             FaultKind fault, GemmTiling tiling) {
    if (m < 1 || n < 1 || k < 4 || k % 4 != 0) return cudaErrorInvalidValue;
    if (tiling == GemmTiling::wgmma)
        return launch_wgmma(a, b, c, m, n, k, stream, fault);
    if (tiling == GemmTiling::automatic) {
        int device = 0, major = 0, minor = 0;
        if (cudaError_t status = cudaGetDevice(&device); status != cudaSuccess) return status;
        if (cudaError_t status = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device);
            status != cudaSuccess)
            return status;
        if (cudaError_t status = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device);
            status != cudaSuccess)
            return status;
        // Hopper: the warpgroup kernel, about 2x the mma.sync one at 8192^3
        // (docs/KERNELS.md, the wgmma TF32 GEMM); its copy engine needs
        // 16-byte aligned operands.
        if (std::string_view(gemm_tf32_path(major, minor)) == "wgmma" && aligned16(a) && aligned16(b))
            return launch_wgmma(a, b, c, m, n, k, stream, fault);

        // The widest tile where it fits (144 KB of shared memory: sm_80,
        // sm_90, sm_100): 172 TFLOP/s at 8192^3 on an H100, against 151 for
        // 128x128 with 4 warps, which fits in the 99 KB of sm_86/89/120.
        int shared_limit = 0;
        if (cudaError_t status =
                cudaDeviceGetAttribute(&shared_limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
            status != cudaSuccess)
            return status;
        tiling = shared_limit >= GemmTiles<128, 256, 2, 4>::kSharedBytes ? GemmTiling::block128x256_warps8
                                                                         : GemmTiling::block128x128_warps4;
    }
    switch (tiling) {
        case GemmTiling::automatic:
        case GemmTiling::wgmma: break;
        case GemmTiling::block128x128_warps8:
            return launch_tiles<GemmTiles<128, 128, 2, 4>>(a, b, c, m, n, k, stream, fault);
        case GemmTiling::block128x128_warps4:
            return launch_tiles<GemmTiles<128, 128, 2, 2>>(a, b, c, m, n, k, stream, fault);
        case GemmTiling::block128x256_warps8:
            return launch_tiles<GemmTiles<128, 256, 2, 4>>(a, b, c, m, n, k, stream, fault);
    }
    return cudaErrorInvalidValue;
}

}  // namespace provision::kernels::detail
