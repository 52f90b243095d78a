#include "gpu/gpu_fixture.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>

#include <fmt/format.h>

#include "core/error.h"
#include "core/regular_file.h"
#include "gpu/detect.h"
#include "gpu/visible_devices.h"
#include "toml/toml_reader.h"

namespace provision {

namespace {

std::string required_string(TableReader& reader, const std::string& key) {
    auto value = reader.string(key);
    if (!value) throw_at(reader.raw(), reader.file(), fmt::format("{} needs '{}'", reader.where(), key));
    if (value->empty())
        throw_at(*reader.node(key), reader.file(), fmt::format("'{}' in {} must not be empty", key, reader.where()));
    return *value;
}

Driver read_driver(const toml::table& table, const std::string& file) {
    TableReader reader(table, file, "[driver]");
    reader.reject_unknown_keys({"version", "cuda"});
    Driver driver;
    driver.present = true;
    driver.version = required_string(reader, "version");
    driver.cuda = required_string(reader, "cuda");
    if (!ComputeCapability::parse(driver.cuda))
        throw_at(*reader.node("cuda"), file,
                 fmt::format("'cuda' in [driver] must be a CUDA version like \"13.0\", not \"{}\"", driver.cuda));
    return driver;
}

std::optional<bool> optional_bool(TableReader& reader, const std::string& key) {
    const toml::node* node = reader.node(key);
    if (!node) return std::nullopt;
    if (!node->is_boolean())
        throw_at(*node, reader.file(), fmt::format("'{}' in {} must be true or false", key, reader.where()));
    return node->as_boolean()->get();
}

std::optional<std::uint64_t> optional_count(TableReader& reader, const std::string& key) {
    const toml::node* node = reader.node(key);
    if (!node) return std::nullopt;
    if (!node->is_integer() || node->as_integer()->get() < 0)
        throw_at(*node, reader.file(), fmt::format("'{}' in {} must be an integer of 0 or more", key, reader.where()));
    return static_cast<std::uint64_t>(node->as_integer()->get());
}

// [gpus.health]: what NVML would report; a key left out is a signal the
// driver cannot read.
GpuHealth read_health(const toml::node& node, const std::string& file, const std::string& gpu) {
    const std::string where = fmt::format("the health table of {}", gpu);
    if (!node.is_table()) throw_at(node, file, fmt::format("'health' in {} must be a table ([gpus.health])", gpu));
    TableReader reader(*node.as_table(), file, where);
    GpuHealth health;
    health.uncorrected_ecc_errors = optional_count(reader, "uncorrected_ecc_errors");
    health.retired_pages_pending = optional_bool(reader, "retired_pages_pending");
    health.row_remap_pending = optional_bool(reader, "row_remap_pending");
    health.row_remap_failure = optional_bool(reader, "row_remap_failure");
    health.thermal_slowdown = optional_bool(reader, "thermal_slowdown");
    health.power_brake_slowdown = optional_bool(reader, "power_brake_slowdown");
    health.hw_slowdown = optional_bool(reader, "hw_slowdown");
    health.memory_used_mib = optional_count(reader, "memory_used_mib");
    if (const auto processes = optional_count(reader, "other_processes"))
        health.other_processes = static_cast<unsigned>(*processes);
    health.mig_mode = optional_bool(reader, "mig_mode");
    reader.reject_unknown_keys(gpu_health_keys());
    return health;
}

Gpu read_gpu(const toml::table& table, const std::string& file, std::size_t position) {
    TableReader reader(table, file, fmt::format("[[gpus]] entry {}", position + 1));
    reader.reject_unknown_keys({"name", "compute_capability", "memory_mib", "uuid", "health"});
    Gpu gpu;
    gpu.index = static_cast<int>(position);
    gpu.nvml_index = static_cast<int>(position);
    gpu.name = required_string(reader, "name");

    const auto capability = reader.capability("compute_capability");
    if (!capability) throw_at(table, file, fmt::format("{} needs 'compute_capability'", reader.where()));
    gpu.compute_capability = *capability;

    const toml::node* memory = reader.node("memory_mib");
    if (!memory) throw_at(table, file, fmt::format("{} needs 'memory_mib'", reader.where()));
    if (!memory->is_integer() || memory->as_integer()->get() <= 0)
        throw_at(*memory, file, fmt::format("'memory_mib' in {} must be a positive integer", reader.where()));
    gpu.memory_mib = static_cast<std::uint64_t>(memory->as_integer()->get());

    if (const auto uuid = reader.string("uuid")) {
        if (!is_gpu_uuid(*uuid))
            throw_at(*reader.node("uuid"), file,
                     fmt::format("'uuid' in {} must look like \"GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx\" "
                                 "(hex digits), not \"{}\"",
                                 reader.where(), *uuid));
        gpu.uuid = *uuid;
    } else {
        gpu.uuid = synthetic_gpu_uuid(position);
    }
    if (const toml::node* health = reader.node("health")) gpu.health = read_health(*health, file, reader.where());
    return gpu;
}

}  // namespace

const std::vector<std::string>& gpu_health_keys() {
    static const std::vector<std::string> keys = {
        "uncorrected_ecc_errors", "retired_pages_pending", "row_remap_pending", "row_remap_failure",
        "thermal_slowdown",       "power_brake_slowdown",  "hw_slowdown",       "memory_used_mib",
        "other_processes",        "mig_mode"};
    return keys;
}

namespace {

std::uint64_t mix(std::uint64_t value) {  // splitmix64's finaliser
    value += 0x9e3779b97f4a7c15ULL;
    value = (value ^ (value >> 30)) * 0xbf58476d1ce4e5b9ULL;
    value = (value ^ (value >> 27)) * 0x94d049bb133111ebULL;
    return value ^ (value >> 31);
}

}  // namespace

bool is_gpu_uuid(const std::string& text) {
    static constexpr std::string_view shape = "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx";
    if (text.size() != shape.size() || text.compare(0, 4, "GPU-") != 0) return false;
    for (std::size_t i = 4; i < shape.size(); ++i) {
        const bool dash = shape[i] == '-';
        if (dash ? text[i] != '-' : !std::isxdigit(static_cast<unsigned char>(text[i]))) return false;
    }
    return true;
}

std::string synthetic_gpu_uuid(std::size_t position) {
    const std::uint64_t high = mix(position * 2 + 1);
    const std::uint64_t low = mix(position * 2 + 2);
    return fmt::format("GPU-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", high >> 32, (high >> 16) & 0xffff, high & 0xffff,
                       low >> 48, low & 0xffffffffffffULL);
}

toml::table parse_gpu_fixture_file(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        throw Error(ExitCode::invalid_input, fmt::format("{}: GPU fixture file not found", path));
    return parse_toml(read_regular_file_or_throw(path, kMaxRecipeBytes), path);
}

GpuFixture read_gpu_fixture(const toml::table& root, const std::string& file,
                            const std::vector<std::string>& extra_tables) {
    TableReader top(root, file, "the GPU fixture's top level");
    std::vector<std::string> known = {"driver", "gpus"};
    known.insert(known.end(), extra_tables.begin(), extra_tables.end());
    top.reject_unknown_keys(known);
    GpuFixture fixture;
    if (const toml::table* driver = top.table("driver")) fixture.driver = read_driver(*driver, file);

    if (const toml::node* gpus = top.node("gpus")) {
        const toml::array* array = gpus->as_array();
        if (!array) throw_at(*gpus, file, "'gpus' must be an array of tables: write each GPU as [[gpus]]");
        for (const toml::node& element : *array) {
            if (!element.is_table()) throw_at(element, file, "each entry of 'gpus' must be a table ([[gpus]])");
            Gpu gpu = read_gpu(*element.as_table(), file, fixture.gpus.size());
            for (const Gpu& earlier : fixture.gpus)
                if (earlier.uuid == gpu.uuid) {
                    const toml::node* uuid = element.as_table()->get("uuid");
                    throw_at(uuid ? *uuid : element, file,
                             fmt::format("[[gpus]] entries {} and {} have the same uuid", earlier.index + 1,
                                         gpu.index + 1));
                }
            fixture.gpus.push_back(std::move(gpu));
        }
        if (!fixture.gpus.empty() && !fixture.driver.present)
            throw_at(array->front(), file, "a machine with [[gpus]] needs a [driver] table with 'version' and 'cuda'");
    }

    return fixture;
}

Inventory load_gpu_fixture(const std::string& path, const std::optional<std::string>& cuda_visible_devices) {
    const GpuFixture fixture = read_gpu_fixture(parse_gpu_fixture_file(path), path);
    Inventory inventory;
    inventory.source = InventorySource::fixture;
    inventory.driver = fixture.driver;
    apply_visible_devices(fixture.gpus, cuda_visible_devices, inventory);
    if (fixture.gpus.empty()) inventory.notes.push_back(fmt::format("simulated machine without NVIDIA GPUs ({})", path));
    return inventory;
}

}  // namespace provision
