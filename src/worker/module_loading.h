// How the driver loads the worker's kernels into a context.  By default
// (lazily, since CUDA 12.2) a kernel is loaded at its first launch, and
// that load may wait for the kernels already in flight on the GPU: the
// quick checks' threads launch some sixteen kernels on a fresh context at
// once, and their first launches took about 5 of the worker's 13 ms after
// the GPU was open.  Loaded with the context instead, this binary's kernels
// added no time the context's creation showed
// (bench/results/check-time-3-2026-11-28.md).  The full mode keeps the
// driver's default: it loads the workload's libnccl.so, whose kernels are
// many and which it uses few of.
#pragma once

#include "core/states.h"

namespace provision {

enum class ModuleLoading { driver_default, eager };

ModuleLoading module_loading_for(ValidateMode mode);

// Sets CUDA_MODULE_LOADING for this process alone (the worker's; the
// workload's environment is its parent's).  The driver reads it at cuInit:
// call it before any CUDA call and before any other thread starts.
void use_module_loading(ModuleLoading loading);

}  // namespace provision
