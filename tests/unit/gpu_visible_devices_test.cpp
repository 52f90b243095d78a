#include <catch2/catch.hpp>

#include "gpu/visible_devices.h"
#include "support/cuda_visible_devices_table.h"
#include "test_support.h"

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
    const auto empty = select_visible_devices(host, "");
    REQUIRE_FALSE(empty.notes.empty());
    CHECK(empty.notes.back().find("leaves the workload no GPU") != std::string::npos);
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
    CHECK(visible("1,2,5") == Positions{1, 2});      // out of range after two good ones
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
    CHECK(visible("8932f937-d72c") == Positions{});   // "GPU-" is needed,
    CHECK(visible("gpu-3c9a") == Positions{});        // as written
    CHECK(visible("GPU-3C9A") == Positions{3});       // the hex in either case
    CHECK(visible("GPU-3c9a 1") == Positions{});      // a prefix ends with the entry,
    CHECK(visible("GPU-8932f9zz") == Positions{});    // as measured against CUDA,
    CHECK(visible("GPU-3c9a2f41-5b6d-47e8-a0c1-d2e3f4a5b6c7-extra") == Positions{3});  // but a whole UUID
    CHECK(visible("GPU-3c9a2f41-5b6d-47e8-a0c1-d2e3f4a5b6c7 1") == Positions{3});      // ignores what follows
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
    REQUIRE(unknown.notes.size() == 2);
    CHECK(unknown.notes[1].find("leaves the workload no GPU") != std::string::npos);
    CHECK(unknown.notes[0].find("matches no GPU") != std::string::npos);

    CHECK(visible("GPU-") == Positions{});
    CHECK(visible("GPU-zz") == Positions{});
}

TEST_CASE("CUDA_VISIBLE_DEVICES: the same GPU named twice the same way leaves none", "[gpu][visible]") {
    const auto twice = select_visible_devices(host, "1,1,0");
    CHECK(twice.positions.empty());
    REQUIRE_FALSE(twice.notes.empty());
    CHECK(twice.notes[0].find("the workload will see no GPU") != std::string::npos);
    CHECK(visible("GPU-1b7e,GPU-1b7e3c52") == Positions{});
    CHECK(visible("1,GPU-1b7e,0") == Positions{1, 0});  // by index and by UUID: once
}

TEST_CASE("CUDA_VISIBLE_DEVICES MIG entries end the list", "[gpu][visible]") {
    const auto legacy = select_visible_devices(host, "2,MIG-GPU-3c9a2f41-5b6d-47e8-a0c1-d2e3f4a5b6c7/1/0");
    CHECK(legacy.positions == Positions{2});
    REQUIRE(legacy.notes.size() == 1);
    CHECK(legacy.notes[0].find("MIG instance") != std::string::npos);
    CHECK(visible("1,MIG-0f2a4c6e-8a0b-5c1d-9e2f-3a4b5c6d7e8f,0") == Positions{1});
    CHECK(visible("MIG-") == Positions{});
}

TEST_CASE("CUDA_VISIBLE_DEVICES: every value measured against CUDA gives CUDA's GPUs", "[gpu][visible]") {
    const std::string uuid = "8932f937-d72c-4106-c12f-20bd9faed9f6";
    const auto rows = test_support::cuda_visible_devices_table(
        test_support::source_path("tests/fixtures/cuda_visible_devices.tsv"), uuid);
    REQUIRE(rows.size() >= 30);
    for (const auto& row : rows) {
        INFO("CUDA_VISIBLE_DEVICES=[" << (row.value ? *row.value : "(unset)") << "]");
        const auto result = select_visible_devices({"GPU-" + uuid}, row.value);
        CHECK(result.positions.size() == row.cuda_count);
        if (row.cuda_count == 0 && row.value) CHECK_FALSE(result.notes.empty());
    }
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
