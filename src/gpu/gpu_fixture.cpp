#include "gpu/gpu_fixture.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <unordered_map>

#include <fmt/format.h>

#include "core/error.h"
#include "core/regular_file.h"
#include "core/text.h"
#include "gpu/detect.h"
#include "gpu/visible_devices.h"
#include "toml/toml_reader.h"

namespace provision {

namespace {

std::size_t pairs_of(std::size_t gpus) { return gpus * (gpus - (gpus > 0)) / 2; }

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
                 fmt::format("'cuda' in [driver] must be a CUDA version like \"13.0\", not \"{}\"",
                             echoed(driver.cuda)));
    return driver;
}

std::optional<bool> optional_bool(TableReader& reader, const std::string& key) {
    const toml::node* node = reader.node(key);
    if (!node) return std::nullopt;
    if (!node->is_boolean())
        throw_at(*node, reader.file(), fmt::format("'{}' in {} must be true or false", key, reader.where()));
    return node->as_boolean()->get();
}

// A count of 0 or more that fits `Count` (NVML's types: unsigned long long
// for error counts and memory, unsigned int for processes).
template <typename Count>
std::optional<Count> optional_count(TableReader& reader, const std::string& key) {
    constexpr auto most = static_cast<std::int64_t>(
        std::min<std::uint64_t>(std::numeric_limits<Count>::max(), std::numeric_limits<std::int64_t>::max()));
    const auto value = reader.integer(key, 0, most);
    if (!value) return std::nullopt;
    return static_cast<Count>(*value);
}

}  // namespace

LinkErrorCounts read_link_error_counts(const toml::node& node, const std::string& file, const std::string& where) {
    if (!node.is_table()) throw_at(node, file, fmt::format("{} must be a table of counts", where));
    TableReader counts(*node.as_table(), file, where);
    LinkErrorCounts links;
    links.nvlink_replay = optional_count<std::uint64_t>(counts, "nvlink_replay");
    links.nvlink_recovery = optional_count<std::uint64_t>(counts, "nvlink_recovery");
    links.nvlink_crc = optional_count<std::uint64_t>(counts, "nvlink_crc");
    links.nvlink_recovery_events = optional_count<std::uint64_t>(counts, "nvlink_recovery_events");
    links.nvlink_recovery_failed = optional_count<std::uint64_t>(counts, "nvlink_recovery_failed");
    links.nvlink_symbol_errors = optional_count<std::uint64_t>(counts, "nvlink_symbol_errors");
    links.pcie_replays = optional_count<unsigned>(counts, "pcie_replays");
    counts.reject_unknown_keys({"nvlink_replay", "nvlink_recovery", "nvlink_crc", "nvlink_recovery_events",
                                "nvlink_recovery_failed", "nvlink_symbol_errors", "pcie_replays"});
    return links;
}

namespace {

// [gpus.health]: what NVML would report; a key left out is a signal the
// driver cannot read.
GpuHealth read_health(const toml::node& node, const std::string& file, const std::string& gpu) {
    const std::string where = fmt::format("the health table of {}", gpu);
    if (!node.is_table()) throw_at(node, file, fmt::format("'health' in {} must be a table ([gpus.health])", gpu));
    TableReader reader(*node.as_table(), file, where);
    GpuHealth health;
    health.uncorrected_ecc_errors = optional_count<std::uint64_t>(reader, "uncorrected_ecc_errors");
    health.retired_pages_pending = optional_bool(reader, "retired_pages_pending");
    health.row_remap_pending = optional_bool(reader, "row_remap_pending");
    health.row_remap_failure = optional_bool(reader, "row_remap_failure");
    health.thermal_slowdown = optional_bool(reader, "thermal_slowdown");
    health.power_brake_slowdown = optional_bool(reader, "power_brake_slowdown");
    health.hw_slowdown = optional_bool(reader, "hw_slowdown");
    health.memory_used_mib = optional_count<std::uint64_t>(reader, "memory_used_mib");
    health.other_processes = optional_count<unsigned>(reader, "other_processes");
    health.mig_mode = optional_bool(reader, "mig_mode");
    if (const auto mode = reader.string("compute_mode")) {
        health.compute_mode = parse_compute_mode(*mode);
        if (!health.compute_mode)
            throw_at(*reader.node("compute_mode"), file,
                     fmt::format("'compute_mode' in {} is default, exclusive-process or prohibited, not '{}'", where,
                                 echoed(*mode)));
    }
    if (const auto action = reader.string("recovery_action")) {
        health.recovery_action = parse_recovery_action(*action);
        if (!health.recovery_action)
            throw_at(*reader.node("recovery_action"), file,
                     fmt::format("'recovery_action' in {} is none, gpu-reset, node-reboot, drain-p2p, drain-and-reset "
                                 "or unknown, not '{}'",
                                 where, echoed(*action)));
    }
    health.retired_pages = optional_count<std::uint64_t>(reader, "retired_pages");
    health.uncorrectable_remapped_rows = optional_count<unsigned>(reader, "uncorrectable_remapped_rows");
    if (const toml::node* counters = reader.node("link_errors"))
        health.link_errors = read_link_error_counts(*counters, file, fmt::format("'link_errors' of {}", where));
    if (const toml::node* xids = reader.node("xids")) {
        const toml::array* list = xids->as_array();
        if (!list) throw_at(*xids, file, fmt::format("'xids' in {} must be an array of Xid numbers", where));
        auto& events = health.xids.emplace();
        for (const toml::node& element : *list)
            if (events.size() < kMostXidEvents)
                events.push_back({static_cast<int>(integer_in_range(element, file, "each of 'xids' (an Xid)", 0, 9999)),
                                  "", "(a fixture's)"});
    }
    reader.reject_unknown_keys(gpu_health_keys());
    return health;
}

// NVLink links cannot exceed what NVML loops over (36 in the CUDA 13.3 header).
constexpr std::int64_t kMostNvLinks = 36;

std::optional<NvLinkCount> read_nvlinks(TableReader& reader) {
    const toml::node* total = reader.node("nvlinks");
    const toml::node* active = reader.node("nvlinks_active");
    if (!total) {
        if (active)
            throw_at(*active, reader.file(),
                     fmt::format("'nvlinks_active' in {} needs 'nvlinks' (how many links the GPU has)", reader.where()));
        return std::nullopt;
    }
    NvLinkCount count;
    count.total = static_cast<unsigned>(*reader.integer("nvlinks", 0, kMostNvLinks));
    count.active = count.total;
    if (active)
        count.active = static_cast<unsigned>(integer_in_range(
            *active, reader.file(),
            fmt::format("'nvlinks_active' in {} (of its {} 'nvlinks')", reader.where(), count.total), 0, count.total));
    if (count.total == 0) return std::nullopt;  // NVML lists no link
    return count;
}

// pcie = { generation = 5, width = 16, max_generation = 5, max_width = 16 }
PcieLink read_pcie(const toml::node& node, const std::string& file, const std::string& gpu) {
    const std::string where = fmt::format("'pcie' of {}", gpu);
    if (!node.is_table())
        throw_at(node, file,
                 fmt::format("{} must be a table: {{ generation = 5, width = 16, max_generation = 5, max_width = 16 }}",
                             where));
    TableReader reader(*node.as_table(), file, where);
    auto figure = [&](const char* key, bool is_width) -> unsigned {
        const toml::node* value = reader.node(key);
        if (!value) throw_at(node, file, fmt::format("{} needs '{}'", where, key));
        static constexpr std::int64_t widths[] = {1, 2, 4, 8, 12, 16, 32};
        const std::int64_t number =
            integer_in_range(*value, file,
                             fmt::format("'{}' in {} ({})", key, where, is_width ? "a PCIe width" : "a PCIe generation"),
                             1, is_width ? 32 : 7);
        if (is_width && std::find(std::begin(widths), std::end(widths), number) == std::end(widths))
            throw_at(*value, file,
                     fmt::format("'{}' in {} must be a PCIe width: 1, 2, 4, 8, 12, 16 or 32, not {}", key, where, number));
        return static_cast<unsigned>(number);
    };
    PcieLink link;
    link.generation = figure("generation", false);
    link.width = figure("width", true);
    link.max_generation = figure("max_generation", false);
    link.max_width = figure("max_width", true);
    reader.reject_unknown_keys({"generation", "width", "max_generation", "max_width"});
    if (link.generation > link.max_generation)
        throw_at(*reader.node("generation"), file,
                 fmt::format("'generation' in {} ({}) is above 'max_generation' ({})", where, link.generation,
                             link.max_generation));
    if (link.width > link.max_width)
        throw_at(*reader.node("width"), file,
                 fmt::format("'width' in {} ({}) is above 'max_width' ({})", where, link.width, link.max_width));
    return link;
}

Gpu read_gpu(const toml::table& table, const std::string& file, std::size_t position) {
    TableReader reader(table, file, fmt::format("[[gpus]] entry {}", position + 1));
    reader.reject_unknown_keys(
        {"name", "compute_capability", "memory_mib", "uuid", "health", "nvlinks", "nvlinks_active", "pcie"});
    Gpu gpu;
    gpu.index = static_cast<int>(position);
    gpu.nvml_index = static_cast<int>(position);
    gpu.name = required_string(reader, "name");

    const auto capability = reader.capability("compute_capability");
    if (!capability) throw_at(table, file, fmt::format("{} needs 'compute_capability'", reader.where()));
    gpu.compute_capability = *capability;

    const auto memory = reader.integer("memory_mib", 1, std::numeric_limits<std::int64_t>::max());
    if (!memory) throw_at(table, file, fmt::format("{} needs 'memory_mib'", reader.where()));
    gpu.memory_mib = static_cast<std::uint64_t>(*memory);

    if (const auto uuid = reader.string("uuid")) {
        if (!is_gpu_uuid(*uuid))
            throw_at(*reader.node("uuid"), file,
                     fmt::format("'uuid' in {} must look like \"GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx\" "
                                 "(hex digits), not \"{}\"",
                                 reader.where(), echoed(*uuid)));
        gpu.uuid = *uuid;
    } else {
        gpu.uuid = synthetic_gpu_uuid(position);
    }
    if (const toml::node* health = reader.node("health")) gpu.health = read_health(*health, file, reader.where());
    gpu.nvlinks = read_nvlinks(reader);
    if (const toml::node* pcie = reader.node("pcie")) gpu.pcie = read_pcie(*pcie, file, reader.where());
    return gpu;
}

// One [[links]] entry: gpus = [0, 1], topology = "NV18", p2p = "ok".
HostPair read_link(const toml::table& table, const std::string& file, std::size_t position,
                   const std::vector<Gpu>& gpus) {
    TableReader reader(table, file, fmt::format("[[links]] entry {}", position + 1));
    reader.reject_unknown_keys({"gpus", "topology", "p2p"});
    const toml::node* ends = reader.node("gpus");
    if (!ends) throw_at(table, file, fmt::format("{} needs 'gpus' (two [[gpus]] positions: gpus = [0, 1])", reader.where()));
    const toml::array* array = ends->as_array();
    const auto position_of = [&](const toml::node& node) {
        return static_cast<int>(integer_in_range(
            node, file, fmt::format("each of 'gpus' in {} (a [[gpus]] position)", reader.where()), 0,
            static_cast<std::int64_t>(gpus.size()) - 1));
    };
    if (!array || array->size() != 2)
        throw_at(*ends, file, fmt::format("'gpus' in {} must name two GPUs by position: gpus = [0, 1]", reader.where()));
    HostPair pair;
    pair.first = position_of((*array)[0]);
    pair.second = position_of((*array)[1]);
    if (pair.first == pair.second)
        throw_at(*ends, file, fmt::format("'gpus' in {} names GPU {} twice", reader.where(), pair.first));

    const auto topology = reader.string("topology");
    if (!topology) throw_at(table, file, fmt::format("{} needs 'topology' (NV<n>, PIX, PXB, PHB, NODE or SYS)", reader.where()));
    const auto word = parse_path_word(*topology);
    if (!word)
        throw_at(*reader.node("topology"), file,
                 fmt::format("'topology' in {} must be one of {}, not \"{}\"", reader.where(),
                             fmt::join(path_words(), ", "), echoed(*topology)));
    pair.path = word->path;
    pair.nvlinks = word->nvlinks;
    for (const int end : {pair.first, pair.second}) {
        const unsigned links = gpus[static_cast<std::size_t>(end)].nvlinks ? gpus[static_cast<std::size_t>(end)].nvlinks->total : 0;
        if (pair.path == LinkPath::nvlink && pair.nvlinks > links)
            throw_at(*reader.node("topology"), file,
                     fmt::format("'topology' in {} is {}, but [[gpus]] entry {} has {} NVLink link{} ('nvlinks')",
                                 reader.where(), path_word(pair.path, pair.nvlinks), end + 1, links, links == 1 ? "" : "s"));
    }

    const auto p2p = reader.string("p2p");
    if (!p2p) throw_at(table, file, fmt::format("{} needs 'p2p' (\"ok\", \"not-supported\", ...)", reader.where()));
    const auto access = parse_peer_access(*p2p);
    if (!access)
        throw_at(*reader.node("p2p"), file,
                 fmt::format("'p2p' in {} must be one of {}, not \"{}\"", reader.where(),
                             fmt::join(peer_access_words(), ", "), echoed(*p2p)));
    pair.p2p = *access;
    return pair;
}

// Every pair of the machine: those [[links]] lists, the rest SYS without
// peer access.  Each entry and each pair is looked up once.
HostTopology read_links(const toml::node* node, const std::string& file, const std::vector<Gpu>& gpus) {
    HostTopology topology;
    const std::size_t pairs = pairs_of(gpus.size());
    if (node) {
        const toml::array* array = node->as_array();
        if (!array) throw_at(*node, file, "'links' must be an array of tables: write each pair as [[links]]");
        if (array->size() > pairs)
            throw_at((*array)[pairs], file,
                     fmt::format("[[links]] entry {} is one too many: a fixture of {} GPU{} has {} pair{}, each listed "
                                 "at most once",
                                 pairs + 1, gpus.size(), gpus.size() == 1 ? "" : "s", pairs, pairs == 1 ? "" : "s"));
        std::size_t position = 0;
        for (const toml::node& element : *array) {
            if (!element.is_table()) throw_at(element, file, "each entry of 'links' must be a table ([[links]])");
            const HostPair pair = read_link(*element.as_table(), file, position++, gpus);
            if (!topology.add(pair))
                throw_at(element, file,
                         fmt::format("[[links]] entry {} names GPUs {} and {} again", position, pair.first, pair.second));
        }
    }
    for (int a = 0; a < static_cast<int>(gpus.size()); ++a)
        for (int b = a + 1; b < static_cast<int>(gpus.size()); ++b)
            if (!topology.find(a, b)) topology.add({a, b, LinkPath::sys, 0, PeerAccess::not_supported});
    return topology;
}

}  // namespace

const std::vector<std::string>& gpu_health_keys() {
    static const std::vector<std::string> keys = {
        "uncorrected_ecc_errors", "retired_pages_pending", "row_remap_pending", "row_remap_failure",
        "thermal_slowdown",       "power_brake_slowdown",  "hw_slowdown",       "memory_used_mib",
        "other_processes",        "mig_mode",              "compute_mode",      "recovery_action",
        "retired_pages",          "uncorrectable_remapped_rows", "link_errors", "xids"};
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
        throw Error(ExitCode::invalid_input, fmt::format("{}: GPU fixture file not found", echoed_path(path)));
    return parse_toml(read_regular_file_or_throw(path, kMaxRecipeBytes), path);
}

GpuFixture read_gpu_fixture(const toml::table& root, const std::string& file,
                            const std::vector<std::string>& extra_tables) {
    TableReader top(root, file, "the GPU fixture's top level");
    std::vector<std::string> known = {"driver", "gpus", "links"};
    known.insert(known.end(), extra_tables.begin(), extra_tables.end());
    top.reject_unknown_keys(known);
    GpuFixture fixture;
    if (const toml::table* driver = top.table("driver")) fixture.driver = read_driver(*driver, file);

    if (const toml::node* gpus = top.node("gpus")) {
        const toml::array* array = gpus->as_array();
        if (!array) throw_at(*gpus, file, "'gpus' must be an array of tables: write each GPU as [[gpus]]");
        if (array->size() > kMostFixtureGpus)
            throw_at((*array)[kMostFixtureGpus], file,
                     fmt::format("[[gpus]] entry {} is one too many: a GPU fixture holds at most {} GPUs",
                                 kMostFixtureGpus + 1, kMostFixtureGpus));
        std::unordered_map<std::string, int> positions;  // uuid -> [[gpus]] position
        for (const toml::node& element : *array) {
            if (!element.is_table()) throw_at(element, file, "each entry of 'gpus' must be a table ([[gpus]])");
            Gpu gpu = read_gpu(*element.as_table(), file, fixture.gpus.size());
            if (const auto [earlier, added] = positions.emplace(gpu.uuid, gpu.index); !added) {
                const toml::node* uuid = element.as_table()->get("uuid");
                throw_at(uuid ? *uuid : element, file,
                         fmt::format("[[gpus]] entries {} and {} have the same uuid", earlier->second + 1,
                                     gpu.index + 1));
            }
            fixture.gpus.push_back(std::move(gpu));
        }
        if (!fixture.gpus.empty() && !fixture.driver.present)
            throw_at(array->front(), file, "a machine with [[gpus]] needs a [driver] table with 'version' and 'cuda'");
    }
    fixture.topology = read_links(top.node("links"), file, fixture.gpus);
    return fixture;
}

Inventory load_gpu_fixture(const std::string& path, const std::optional<std::string>& cuda_visible_devices) {
    const GpuFixture fixture = read_gpu_fixture(parse_gpu_fixture_file(path), path);
    Inventory inventory;
    inventory.source = InventorySource::fixture;
    inventory.driver = fixture.driver;
    std::vector<Gpu> host = fixture.gpus;
    if (host.size() < 2)  // as NVML is read: a host of one GPU has no peer to reach over NVLink
        for (Gpu& gpu : host) gpu.nvlinks.reset();
    apply_visible_devices(host, cuda_visible_devices, inventory);
    std::vector<int> positions;
    for (const Gpu& gpu : inventory.gpus) positions.push_back(gpu.nvml_index);
    inventory.pairs = visible_pairs(positions, fixture.topology);
    if (fixture.gpus.empty())
        inventory.notes.push_back(fmt::format("simulated machine without NVIDIA GPUs ({})", echoed_path(path)));
    return inventory;
}

}  // namespace provision
