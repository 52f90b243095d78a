// NVML's topology on the real machine, read by provision's probe and held
// against what nvidia-smi prints for the same GPUs: PCIe generation and
// width (maximum; the current generation only where the GPU is busy, so it
// is not compared), NVLink counts, and, with two GPUs or more, the path
// words of `nvidia-smi topo -m`.  Without nvidia-smi or NVML it prints why
// and passes.
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "gpu/detect.h"

namespace {

// stdout of `command`, or nullopt when it cannot run or fails.
std::optional<std::string> output_of(const std::string& command) {
    FILE* pipe = ::popen((command + " 2>/dev/null").c_str(), "r");
    if (!pipe) return std::nullopt;
    std::string text;
    char buffer[4096];
    while (std::size_t read = std::fread(buffer, 1, sizeof buffer, pipe)) text.append(buffer, read);
    return ::pclose(pipe) == 0 ? std::optional<std::string>(text) : std::nullopt;
}

std::vector<std::string> fields(const std::string& line) {
    std::vector<std::string> out;
    std::stringstream stream(line);
    for (std::string field; std::getline(stream, field, ',');) {
        field.erase(0, field.find_first_not_of(' '));
        out.push_back(field);
    }
    return out;
}

}  // namespace

TEST_CASE("NVML topology matches nvidia-smi on this machine", "[gpu][topology]") {
    const auto listing =
        output_of("nvidia-smi --query-gpu=uuid,pcie.link.gen.max,pcie.link.width.max,pcie.link.width.current "
                  "--format=csv,noheader,nounits");
    if (!listing) {
        WARN("skipped: nvidia-smi is not there or failed (no NVIDIA driver)");
        return;
    }
    provision::DetectOptions options;
    options.time_limit = std::chrono::milliseconds(20000);
    const provision::Inventory inventory = provision::detect_gpus(options);
    REQUIRE_FALSE(inventory.gpus.empty());
    std::stringstream lines(*listing);
    std::size_t compared = 0;
    for (std::string line; std::getline(lines, line);) {
        const auto row = fields(line);
        if (row.size() != 4) continue;
        for (const auto& gpu : inventory.gpus) {
            if (gpu.uuid != row[0]) continue;
            INFO(gpu.uuid << ": nvidia-smi says " << line);
            REQUIRE(gpu.pcie);
            CHECK(std::to_string(gpu.pcie->max_generation) == row[1]);
            CHECK(std::to_string(gpu.pcie->max_width) == row[2]);
            CHECK(std::to_string(gpu.pcie->width) == row[3]);
            CHECK(gpu.pcie->generation >= 1);
            CHECK(gpu.pcie->generation <= gpu.pcie->max_generation);
            ++compared;
        }
    }
    CHECK(compared == inventory.gpus.size());
    const std::size_t count = inventory.gpus.size();
    CHECK(inventory.pairs.size() == count * (count - 1) / 2);
    for (const auto& gpu : inventory.gpus)
        if (gpu.nvlinks) {
            CHECK(gpu.nvlinks->active <= gpu.nvlinks->total);
            CHECK(gpu.nvlinks->total <= 36);
        }
    if (count < 2) return;
    // `nvidia-smi topo -m`: the row of GPU0 holds the words for (0, 1), (0, 2), ...
    const auto matrix = output_of("nvidia-smi topo -m");
    REQUIRE(matrix);
    std::stringstream rows(*matrix);
    for (std::string row; std::getline(rows, row);) {
        if (row.rfind("GPU0", 0) != 0) continue;
        std::stringstream words(row);
        std::vector<std::string> cells;
        for (std::string word; words >> word;) cells.push_back(word);
        for (const auto& pair : inventory.pairs)
            if (pair.first == 0 && static_cast<std::size_t>(pair.second + 1) < cells.size()) {
                INFO("topo -m row: " << row);
                CHECK(pair.path_word() == cells[static_cast<std::size_t>(pair.second) + 1]);
            }
        break;
    }
}
