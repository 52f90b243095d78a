// Thin wrappers over the Hopper (sm_90a) instructions the warp-specialised
// kernels are built from: mbarriers, TMA tensor copies, shared-memory matrix
// descriptors and the warpgroup matrix (wgmma) synchronisation.  Each one is
// a single PTX instruction, or a loop around one; the comments name the PTX
// ISA section it comes from.
//
// They exist only in the sm_90a device pass (__CUDA_ARCH_FEAT_SM90_ALL):
// the kernels that call them are compiled for that target alone and keep
// their device code behind the same guard, so a call from any other target
// fails to compile instead of failing on the GPU.
#pragma once

#include <cuda.h>  // CUtensorMap

#include <cstdint>

namespace provision::kernels::detail {

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

// ---- mbarriers ---------------------------------------------------------------
// "Parallel Synchronization and Communication Instructions: mbarrier".  `bar`
// is the shared-memory address of a 64-bit barrier object.

// A phase completes after `count` arrivals (and the transaction bytes any
// expect_tx announced).
__device__ __forceinline__ void mbar_init(std::uint32_t bar, std::uint32_t count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

// Makes the initialised barriers visible to the other threads and to the
// async proxy (the TMA unit) before any of them uses one ("membar/fence":
// fence.mbarrier_init).
__device__ __forceinline__ void mbar_init_fence() {
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// Arrives and announces `bytes` of copies that complete on this barrier.
__device__ __forceinline__ void mbar_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}

__device__ __forceinline__ void mbar_arrive(std::uint32_t bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

// Whether the phase of parity `parity` has completed; the hardware may
// suspend the thread for a while before answering no.
__device__ __forceinline__ bool mbar_try_wait(std::uint32_t bar, std::uint32_t parity) {
    std::uint32_t done;
    asm volatile(
        "{\n .reg .pred p;\n"
        " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
        " selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar), "r"(parity)
        : "memory");
    return done != 0;
}

// Waits without a limit.  A hung pipeline is left to the caller's time
// limit: a trap on a timeout here makes ptxas give up the consumers'
// per-warpgroup register budget (setmaxnreg) and spill.
__device__ __forceinline__ void mbar_wait(std::uint32_t bar, std::uint32_t parity) {
    while (!mbar_try_wait(bar, parity)) {
    }
}

// ---- TMA ---------------------------------------------------------------------
// "Data Movement and Conversion Instructions: cp.async.bulk.tensor".  One box
// of the tensor that `map` describes, starting at the given element
// coordinates (innermost first), lands at shared address `dst`, laid out
// (swizzled) as the map says; elements outside the tensor arrive as zeros.
// Completion counts the box's bytes on barrier `bar`.

__device__ __forceinline__ void tma_load_2d(std::uint32_t dst, const CUtensorMap* map, std::uint32_t bar, int x,
                                            int y) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4}], [%2];" ::"r"(dst),
        "l"(reinterpret_cast<std::uint64_t>(map)), "r"(bar), "r"(x), "r"(y)
        : "memory");
}

__device__ __forceinline__ void tma_load_3d(std::uint32_t dst, const CUtensorMap* map, std::uint32_t bar, int x,
                                            int y, int z) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%3, %4, %5}], [%2];" ::"r"(dst),
        "l"(reinterpret_cast<std::uint64_t>(map)), "r"(bar), "r"(x), "r"(y), "r"(z)
        : "memory");
}

// Orders this thread's earlier generic-proxy writes to shared memory before
// later async-proxy reads of it (wgmma operands, TMA stores): "membar/fence",
// fence.proxy.async.
__device__ __forceinline__ void fence_proxy_async_shared() {
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// ---- warpgroup matrix instructions -------------------------------------------
// "Asynchronous Warpgroup Level Matrix Instructions".

// Shared-memory matrix descriptor ("Matrix Descriptor Format") for a tile
// stored with the 128-byte swizzle (bits 62-63 = 1), base offset 0.  Address
// and both offsets are in bytes and encoded in 16-byte units.  K-major
// operands: lbo = 16 (unused), sbo = 1024 (the next 8 rows).  MN-major
// operands: sbo = 1024 (the next 8 rows along K), lbo = the distance to the
// next 64 elements of the MN dimension.  Advancing along K inside a swizzled
// row adds bytes / 16 to the descriptor.  Callers pass the offsets as
// literals: a K-major wrapper around this changed the code nvcc generates
// for the attention kernel.
__device__ __forceinline__ std::uint64_t smem_desc_sw128(std::uint32_t addr, std::uint32_t lbo, std::uint32_t sbo) {
    return static_cast<std::uint64_t>((addr & 0x3FFFF) >> 4) |
           (static_cast<std::uint64_t>((lbo >> 4) & 0x3FFF) << 16) |
           (static_cast<std::uint64_t>((sbo >> 4) & 0x3FFF) << 32) | (1ull << 62);
}

// wgmma.fence: orders earlier register and shared-memory accesses of the
// operands and accumulators before the wgmma.mma_async that follow.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }

// wgmma.commit_group: the wgmma.mma_async issued since the last commit form
// one group.
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }

// wgmma.wait_group: waits until at most `Pending` committed groups are still
// running.
template <int Pending>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(Pending) : "memory");
}

// Keeps the compiler from moving reads or writes of accumulator (or register
// operand) fragments across the asynchronous matrix instructions: an empty
// asm that claims to change every register of the fragment.
template <int N>
__device__ __forceinline__ void warpgroup_fence_operand(float (&r)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}
template <int N>
__device__ __forceinline__ void warpgroup_fence_operand(std::uint32_t (&r)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+r"(r[i])::"memory");
}

// ---- register budgets --------------------------------------------------------
// "Miscellaneous Instructions: setmaxnreg".  A warpgroup lowers (producer) or
// raises (consumers) its per-thread register limit; all warps of the
// warpgroup execute it.

template <int Registers>
__device__ __forceinline__ void setmaxnreg_dec() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(Registers));
}

template <int Registers>
__device__ __forceinline__ void setmaxnreg_inc() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(Registers));
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

}  // namespace provision::kernels::detail
