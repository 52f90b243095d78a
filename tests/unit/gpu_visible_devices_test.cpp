#include <catch2/catch.hpp>

#include "gpu/visible_devices.h"

using provision::select_visible_devices;

namespace {

const std::vector<std::string> host = {
    "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6",
    "GPU-1b7e3c52-0a9d-4e61-8f2b-7c4d5e6f7a80",
    "GPU-1b99aa00-0000-4000-8000-000000000000",
    "GPU-3c9a2f41-5b6d-47e8-a0c1-d2e3f4a5b6c7",
};

std::vector<std::size_t> visible(const std::optional<std::string>& value) {
    return select_visible_devices(host, value).positions;
}

using Positions = std::vector<std::size_t>;

}  // namespace

TEST_CASE("CUDA_VISIBLE_DEVICES unset shows every GPU, empty shows none", "[gpu][visible]") {
    CHECK(visible(std::nullopt) == Positions{0, 1, 2, 3});
    CHECK(visible("") == Positions{});
    CHECK(visible("  ") == Positions{});
    CHECK(select_visible_devices(host, "").notes.empty());
}

TEST_CASE("CUDA_VISIBLE_DEVICES indices select and reorder", "[gpu][visible]") {
    CHECK(visible("0") == Positions{0});
    CHECK(visible("2,0") == Positions{2, 0});
    CHECK(visible("3, 1") == Positions{3, 1});
    CHECK(visible("1,2,3,0") == Positions{1, 2, 3, 0});
}

TEST_CASE("CUDA_VISIBLE_DEVICES stops at the first invalid entry", "[gpu][visible]") {
    CHECK(visible("0,2,-1,1") == Positions{0, 2});  // CUDA's documented example
    CHECK(visible("1,7,0") == Positions{1});        // out of range
    CHECK(visible("1,,0") == Positions{1});         // empty entry
    CHECK(visible("1,1,0") == Positions{1});        // the same GPU twice
    CHECK(visible("foo,0") == Positions{});
    CHECK(visible("99999999999999999999") == Positions{});

    const auto result = select_visible_devices(host, "0,2,-1,1");
    REQUIRE(result.notes.size() == 1);
    CHECK(result.notes[0].find("entry 3 ('-1')") != std::string::npos);
    CHECK(result.notes[0].find("every entry after it") != std::string::npos);
}

TEST_CASE("CUDA_VISIBLE_DEVICES UUIDs match in full or by a unique prefix", "[gpu][visible]") {
    CHECK(visible("GPU-3c9a2f41-5b6d-47e8-a0c1-d2e3f4a5b6c7") == Positions{3});
    CHECK(visible("GPU-8932f937") == Positions{0});
    CHECK(visible("8932f937-d72c") == Positions{0});  // "GPU-" is optional
    CHECK(visible("gpu-3C9A") == Positions{3});       // case does not matter
    CHECK(visible("GPU-1b7e,0") == Positions{1, 0});  // UUIDs and indices mix
    CHECK(visible("GPU-1b7e3c52-0a9d-4e61-8f2b-7c4d5e6f7a80,GPU-1b99") == Positions{1, 2});
}

TEST_CASE("CUDA_VISIBLE_DEVICES UUID prefixes that are ambiguous or unknown end the list", "[gpu][visible]") {
    const auto ambiguous = select_visible_devices(host, "3,GPU-1b,0");
    CHECK(ambiguous.positions == Positions{3});
    REQUIRE(ambiguous.notes.size() == 1);
    CHECK(ambiguous.notes[0].find("matches 2 GPUs") != std::string::npos);

    const auto unknown = select_visible_devices(host, "GPU-ffff");
    CHECK(unknown.positions.empty());
    REQUIRE(unknown.notes.size() == 1);
    CHECK(unknown.notes[0].find("matches no GPU") != std::string::npos);

    CHECK(visible("GPU-") == Positions{});
    CHECK(visible("GPU-zz") == Positions{});
}

TEST_CASE("CUDA_VISIBLE_DEVICES MIG entries resolve to their GPU or end the list", "[gpu][visible]") {
    const auto legacy = select_visible_devices(host, "MIG-GPU-3c9a2f41-5b6d-47e8-a0c1-d2e3f4a5b6c7/1/0");
    CHECK(legacy.positions == Positions{3});
    REQUIRE(legacy.notes.size() == 1);
    CHECK(legacy.notes[0].find("MIG instance") != std::string::npos);

    const auto modern = select_visible_devices(host, "1,MIG-0f2a4c6e-8a0b-5c1d-9e2f-3a4b5c6d7e8f,0");
    CHECK(modern.positions == Positions{1});
    REQUIRE(modern.notes.size() == 1);
    CHECK(modern.notes[0].find("MIG instance") != std::string::npos);

    CHECK(visible("MIG-") == Positions{});
    CHECK(visible("MIG-GPU-/1/0") == Positions{});
}

TEST_CASE("apply_visible_devices numbers GPUs as the workload sees them", "[gpu][visible]") {
    std::vector<provision::Gpu> gpus(host.size());
    for (std::size_t i = 0; i < host.size(); ++i) {
        gpus[i].uuid = host[i];
        gpus[i].nvml_index = static_cast<int>(i);
    }
    provision::Inventory inventory;
    provision::apply_visible_devices(gpus, "3,1", inventory);
    REQUIRE(inventory.gpus.size() == 2);
    CHECK(inventory.gpus[0].index == 0);
    CHECK(inventory.gpus[0].nvml_index == 3);
    CHECK(inventory.gpus[1].index == 1);
    CHECK(inventory.gpus[1].nvml_index == 1);
    CHECK(inventory.hidden_gpus == 2);
}
