// Loading a check's kernels before its work is queued.  The driver loads a
// kernel lazily, at its first launch (CUDA's default since 12.2), and that
// load may wait for the kernels in flight on the GPU, the other checks'
// included: in a fresh worker the first launches took 1-4 ms each, inside
// the check's kernel timer (0.9 ms reported for a 0.05 ms kernel).  Loading
// every kernel of the binary with the context instead made the context
// 6 ms slower (bench/results/check-time-3-2026-11-28.md).  So a check
// loads what it will launch, before it queues anything: while a
// LoadingKernels lives on a thread, each launcher loads the kernel it would
// launch (cudaFuncGetAttributes) and launches nothing.  What waits is a
// module's first load (one per .cu file: 0.2 ms on an idle GPU, 20 ms behind
// a 20 ms kernel); loading every module at the device's opening, before any
// check starts, was tried and came out even: the checks' own loads come
// before most work is queued (bench/results/kernel-modules-2026-11-28.md).
// Internal to kernels/; load_kernel is for the .cu files.
#pragma once

#ifdef __CUDACC__
#include <cuda_runtime.h>
#endif

namespace provision::kernels::detail {

inline thread_local bool loading_kernels_on_this_thread = false;

class LoadingKernels {
public:
    LoadingKernels() : was_(loading_kernels_on_this_thread) { loading_kernels_on_this_thread = true; }
    ~LoadingKernels() { loading_kernels_on_this_thread = was_; }
    LoadingKernels(const LoadingKernels&) = delete;
    LoadingKernels& operator=(const LoadingKernels&) = delete;

private:
    bool was_;
};

inline bool loading_kernels() { return loading_kernels_on_this_thread; }

#ifdef __CUDACC__
// Loads `kernel` into the current context without launching it.
template <typename... Params>
cudaError_t load_kernel(void (*kernel)(Params...)) {
    cudaFuncAttributes attributes;
    return cudaFuncGetAttributes(&attributes, kernel);
}
#endif

}  // namespace provision::kernels::detail
