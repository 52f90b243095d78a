// The checks' host halves run while the GPU is being opened, and opening it
// (the driver creating the CUDA context, one thread's work) is what the
// start waits for.  A host half's threads give way to it: on a machine with
// fewer free cores than the host halves' threads, the context's creation
// would otherwise get a share of a core, not a core.
#pragma once

namespace provision {

// Lowers the calling thread's scheduling priority to the least (nice 19);
// threads it starts inherit it.  One way: an unprivileged thread cannot
// raise it again, so call it only on a thread that ends with its task.
// False where the system refused, which leaves the thread as it was.
bool lower_this_thread_priority();

}  // namespace provision
