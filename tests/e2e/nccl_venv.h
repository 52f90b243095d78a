// Shared by the tests whose workload carries NCCL (nccl_paths_test,
// fabric_test): the native test data, the prerequisites of a simulated
// worker, and a venv whose torch 2.11 (CUDA 13.0) carries the
// nvidia-nccl-cu13 2.28.9 wheel (NCCL with cuMem on).
#pragma once

#include <filesystem>
#include <string>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "harness.h"

namespace e2e {

inline std::string test_data(const std::string& file) { return std::string(PROVISION_NATIVE_TEST_DATA) + "/" + file; }

// Where a test needs the simulated workers and a CUDA torch library, it says
// why it cannot run rather than fail.
inline bool skip_without_prerequisites() {
    if (!PROVISION_FAULT_INJECTION) {
        WARN("skipped: built without fault injection (PROVISION_FAULT_INJECTION=OFF), so no simulated worker");
        return true;
    }
    if (!PROVISION_NATIVE_HAVE_CUDA_DATA) {
        WARN("skipped: no nvcc to build a CUDA torch library for the venv");
        return true;
    }
    return false;
}

inline void write_dist_info(const std::string& site, const std::string& name, const std::string& version) {
    const std::string folder = fmt::format("{}/{}-{}.dist-info", site, name, version);
    std::filesystem::create_directories(folder);
    write_file(folder + "/METADATA", fmt::format("Metadata-Version: 2.1\nName: {}\nVersion: {}\n", name, version));
}

// The venv in `dir` (a second call in the same folder reuses it),
// with the NCCL wheel when `wheel`; returns its python.
inline std::string torch_venv(const TempDir& dir, bool wheel) {
    namespace fs = std::filesystem;
    const std::string root = dir.file("venv");
    const std::string site = root + "/lib/python3.12/site-packages";
    if (fs::exists(root + "/bin/python3")) {
        if (fs::exists(site + "/nvidia_nccl_cu13-2.28.9.dist-info") == wheel) return root + "/bin/python3";
        fs::remove_all(root);  // made the other way
    }
    fs::create_directories(site + "/torch/lib");
    write_dist_info(site, "torch", "2.11.0+cu130");
    write_file(site + "/torch/version.py", "__version__ = '2.11.0+cu130'\ncuda: Optional[str] = '13.0'\n");
    fs::copy_file(test_data("cuda/libtorch_cuda.so"), site + "/torch/lib/libtorch_cuda.so");
    if (wheel) {
        write_dist_info(site, "nvidia_nccl_cu13", "2.28.9");
        fs::create_directories(site + "/nvidia/nccl/lib");
        fs::copy_file(test_data("nccl/wheel/nccl_wheel.so"), site + "/nvidia/nccl/lib/libnccl.so.2");
    }
    fs::create_directories(root + "/bin");
    write_file(root + "/pyvenv.cfg", "home = /nonexistent/bin\nversion = 3.12.3\n");
    write_file(root + "/bin/python3", "#!/bin/sh\n");
    return root + "/bin/python3";
}

}  // namespace e2e
