// Fuzz target: the GPU fixture reader (--gpu-fixture), on a fixture given as
// bytes.  A first line "# CUDA_VISIBLE_DEVICES=..." (a TOML comment, so the
// fixture stays valid) is the visible-devices value the machine is read
// with.  Only provision::Error(invalid_input) may come out of a bad fixture;
// a fixture that loads gives GPUs with a name, a memory size and distinct
// well-formed UUIDs, and CUDA_VISIBLE_DEVICES only hides or reorders them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "core/error.h"
#include "fuzz/fuzz_support.h"
#include "gpu/detect.h"
#include "gpu/gpu_fixture.h"

namespace fuzz::gpu_fixture {

inline std::optional<std::string> visible_devices(std::string_view input) {
    constexpr std::string_view prefix = "# CUDA_VISIBLE_DEVICES=";
    if (!input.starts_with(prefix)) return std::nullopt;
    input.remove_prefix(prefix.size());
    return std::string(input.substr(0, input.find('\n')));
}

inline void check_machine(const provision::GpuFixture& machine) {
    std::set<std::string> uuids;
    for (std::size_t i = 0; i < machine.gpus.size(); ++i) {
        const provision::Gpu& gpu = machine.gpus[i];
        FUZZ_CHECK(gpu.index == static_cast<int>(i));
        FUZZ_CHECK(!gpu.name.empty());
        FUZZ_CHECK(gpu.memory_mib > 0);
        FUZZ_CHECK(provision::is_gpu_uuid(gpu.uuid));
        FUZZ_CHECK(uuids.insert(gpu.uuid).second);
    }
    if (!machine.gpus.empty()) FUZZ_CHECK(machine.driver.present);
    // Within the bounds; every pair once, listed or not; NV<n> never names more links than a GPU has.
    const std::size_t count = machine.gpus.size();
    FUZZ_CHECK(count <= provision::kMostFixtureGpus);
    FUZZ_CHECK(machine.topology.pairs().size() == count * (count - (count > 0)) / 2);
    for (const auto& pair : machine.topology.pairs()) {
        FUZZ_CHECK(pair.first != pair.second);
        if (pair.path != provision::LinkPath::nvlink) continue;
        for (const int end : {pair.first, pair.second}) {
            const auto& links = machine.gpus[static_cast<std::size_t>(end)].nvlinks;
            FUZZ_CHECK(links && pair.nvlinks <= links->total);
        }
    }
}

inline void check_visible(const provision::GpuFixture& machine, const provision::Inventory& inventory) {
    FUZZ_CHECK(inventory.simulated());
    FUZZ_CHECK(inventory.gpus.size() + static_cast<std::size_t>(inventory.hidden_gpus) == machine.gpus.size());
    std::set<std::string> seen;
    for (std::size_t i = 0; i < inventory.gpus.size(); ++i) {
        const provision::Gpu& gpu = inventory.gpus[i];
        FUZZ_CHECK(gpu.index == static_cast<int>(i));  // numbered as the workload sees them
        FUZZ_CHECK(seen.insert(gpu.uuid).second);
        const auto host = std::find_if(machine.gpus.begin(), machine.gpus.end(),
                                       [&](const provision::Gpu& g) { return g.uuid == gpu.uuid; });
        FUZZ_CHECK(host != machine.gpus.end());
        FUZZ_CHECK(host->name == gpu.name && host->memory_mib == gpu.memory_mib);
    }
    const std::size_t visible = inventory.gpus.size();
    FUZZ_CHECK(inventory.pairs.size() == visible * (visible - (visible > 0)) / 2);
    for (const auto& pair : inventory.pairs) FUZZ_CHECK(pair.first < pair.second && pair.second < static_cast<int>(visible));
}

inline void one_input(std::string_view input) {
    static MemoryFile file("fuzz-gpu-fixture.toml");
    const std::string path = file.hold(input);
    try {
        const provision::GpuFixture machine =
            provision::read_gpu_fixture(provision::parse_gpu_fixture_file(path), path);
        check_machine(machine);
        check_visible(machine, provision::load_gpu_fixture(path, visible_devices(input)));
    } catch (const provision::Error& error) {
        FUZZ_CHECK(error.code() == provision::ExitCode::invalid_input);
        FUZZ_CHECK(std::string_view(error.what()).size() > 0);
        FUZZ_CHECK(printable_as_is(error.what()));
    }
}

}  // namespace fuzz::gpu_fixture
