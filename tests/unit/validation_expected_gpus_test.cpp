// Which GPUs get a worker at the very start, before NVML answers.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "validate/expected_gpus.h"

using provision::count_gpu_device_nodes;
using provision::expected_gpu_entries;
using Entries = std::vector<std::string>;

TEST_CASE("expected GPUs: one per device node when CUDA_VISIBLE_DEVICES is unset", "[validation][expected]") {
    CHECK(expected_gpu_entries(std::nullopt, 0).empty());
    CHECK(expected_gpu_entries(std::nullopt, 2) == Entries{"0", "1"});
    CHECK(expected_gpu_entries(std::nullopt, 8).size() == 8);
}

TEST_CASE("expected GPUs: CUDA_VISIBLE_DEVICES's entries, as far as they can name a GPU", "[validation][expected]") {
    CHECK(expected_gpu_entries("1,0", 2) == Entries{"1", "0"});
    CHECK(expected_gpu_entries(" 1 , 0 ", 2) == Entries{"1", "0"});
    CHECK(expected_gpu_entries("GPU-8932f937,1", 4) == Entries{"GPU-8932f937", "1"});
    CHECK(expected_gpu_entries("", 4).empty());                   // no GPU
    CHECK(expected_gpu_entries("0,,1", 4) == Entries{"0"});       // CUDA stops at the empty entry
    CHECK(expected_gpu_entries("0,-1,1", 4) == Entries{"0"});     // and at one that is no index
    CHECK(expected_gpu_entries("0,1,2,3", 2) == Entries{"0", "1"});  // never more than the device nodes
    CHECK(expected_gpu_entries("MIG-abc,MIG-def", 1) == Entries{"MIG-abc"});  // one MIG instance a process
    CHECK(expected_gpu_entries("0", 0).empty());                  // no device node: no GPU to open
}

TEST_CASE("expected GPUs: the device nodes are /dev/nvidiaN, not nvidiactl or nvidia-uvm", "[validation][expected]") {
    const auto dir = std::filesystem::temp_directory_path() / "provision-dev-nodes-test";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    for (const char* name : {"nvidia0", "nvidia3", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-caps", "nvidiaX1"})
        std::ofstream(dir / name) << "";
    CHECK(count_gpu_device_nodes(dir.string()) == 2);
    CHECK(count_gpu_device_nodes((dir / "missing").string()) == 0);
    std::filesystem::remove_all(dir);
}
