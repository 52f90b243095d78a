// NCCL's multi-node NVLink check as the worker makes it (worker/cuda/
// link_checks.h check_fabric_handle) on the real driver: memory with a
// fabric handle, exported, imported, mapped, and a pattern written through
// the import by a kernel read back through the exporter's mapping.  Where
// the GPU has no fabric handles it says so; where IMEX is not set up (no
// channel, or no multi-node NVLink: the lent H100s) cuMemCreate answers 800,
// which the check reports as CUDA's error with the call that made it.
#include <string>

#include "cuda_test_support.h"
#include "worker/cuda/link_checks.h"

TEST_CASE("the fabric-handle check answers as the driver does, naming CUDA's error", "[gpu][fabric]") {
    const auto device = provision::gpu_tests::current_device_or_skip();
    if (!device) return;
    const auto check = provision::links::check_fabric_handle(device->index);
    INFO(check.detail);
    WARN("fabric handle on GPU " << device->index << ": " << provision::to_string(check.status) << " (CUDA error "
                                 << check.cuda_error << "): " << check.detail);
    CHECK(check.status != provision::FabricHandleStatus::not_measured);
    if (check.status == provision::FabricHandleStatus::failed) {
        CHECK(check.cuda_error != 0);
        CHECK(check.detail.find("CUDA error") != std::string::npos);
    }
    if (check.status == provision::FabricHandleStatus::passed) CHECK(check.detail.find("read back") != std::string::npos);
    // Twice in one process: the first check released all it made.
    const auto again = provision::links::check_fabric_handle(device->index);
    CHECK(again.status == check.status);
    CHECK(again.cuda_error == check.cuda_error);
}
