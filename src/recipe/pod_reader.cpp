#include "recipe/pod_reader.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include <fmt/format.h>

#include "core/error.h"
#include "core/text.h"
#include "packages/version.h"
#include "toml/toml_reader.h"

namespace provision {

namespace {

constexpr std::uint64_t kMostShmMib = std::numeric_limits<std::uint64_t>::max() >> 20;

double share(const toml::node& node, const std::string& file, const std::string& what) {
    const std::optional<double> value = node.value<double>();  // integers too
    if (!value || !(*value > 0) || *value > 1)
        throw_at(node, file, fmt::format("{} is a share of the expected figure: a number above 0, at most 1", what));
    return *value;
}

double positive_number(const toml::node& node, const std::string& file, const std::string& what) {
    const std::optional<double> value = node.value<double>();
    if (!value || !(*value > 0)) throw_at(node, file, fmt::format("{} must be a positive number", what));
    return *value;
}

unsigned whole_number(TableReader& reader, const std::string& key, std::int64_t low, std::int64_t high) {
    const auto value = reader.integer(key, low, high);
    if (!value) throw_at(reader.raw(), reader.file(), fmt::format("{} needs '{}'", reader.where(), key));
    return static_cast<unsigned>(*value);
}

bool flag(TableReader& reader, const std::string& key) {
    const toml::node* node = reader.node(key);
    if (!node) return false;
    if (!node->is_boolean())
        throw_at(*node, reader.file(), fmt::format("'{}' in {} must be true or false", key, reader.where()));
    return node->as_boolean()->get();
}

std::string required_text(TableReader& reader, const std::string& key) {
    auto value = reader.string(key);
    if (!value || value->empty())
        throw_at(value ? *reader.node(key) : reader.raw(), reader.file(),
                 fmt::format("{} needs '{}' (a non-empty string)", reader.where(), key));
    return *value;
}

// Each entry of an array of tables, with its position for messages.
template <typename Read>
void each_table(const toml::node& node, const std::string& file, const std::string& name, Read read) {
    const toml::array* array = node.as_array();
    if (!array) throw_at(node, file, fmt::format("'{}' in [pod] must be an array of tables: write [[pod.{}]]", name, name));
    std::size_t position = 0;
    for (const toml::node& element : *array) {
        if (!element.is_table())
            throw_at(element, file, fmt::format("each entry of 'pod.{}' must be a table ([[pod.{}]])", name, name));
        TableReader reader(*element.as_table(), file, fmt::format("[[pod.{}]] entry {}", name, ++position));
        read(reader);
    }
}

template <typename Figure>
void put_by_generation(std::vector<Figure>& figures, Figure figure) {
    const auto it = std::find_if(figures.begin(), figures.end(),
                                 [&](const Figure& known) { return known.generation == figure.generation; });
    if (it == figures.end()) figures.push_back(std::move(figure));
    else *it = std::move(figure);
}

void read_variables(TableReader& reader, const std::string& key, std::map<std::string, std::string>& into) {
    const toml::node* node = reader.node(key);
    if (!node) return;
    if (node->is_table())
        for (const auto& [name, value] : *node->as_table())
            if (!is_valid_variable_name(name.str()))
                throw_at(value, reader.file(),
                         fmt::format("'{}' in '{}' of {} is not an environment variable name (letters, digits and "
                                     "'_', not starting with a digit)",
                                     echoed(name.str()), key, reader.where()));
    const auto values = reader.string_map(key);
    if (!values) throw_at(*node, reader.file(), fmt::format("'{}' in {} must be a table of strings", key, reader.where()));
    for (const auto& [name, value] : *values) into[name] = value;
}

}  // namespace

const NvLinkFigure* PodRecipe::nvlink_figure(unsigned generation, const std::string& architecture,
                                             const std::string& family) const {
    for (const auto& figure : nvlink)
        if (generation != 0 && figure.generation == generation) return &figure;
    if (generation != 0) return nullptr;
    for (const auto& name : {architecture, family})
        for (const auto& figure : nvlink)
            if (!name.empty() &&
                std::find(figure.architectures.begin(), figure.architectures.end(), name) != figure.architectures.end())
                return &figure;
    return nullptr;
}

const PcieFigure* PodRecipe::pcie_figure(unsigned generation) const {
    for (const auto& figure : pcie)
        if (figure.generation == generation) return &figure;
    return nullptr;
}

void read_peer_access_settings(const toml::table& table, const std::string& file, const std::string& where,
                               PeerAccessSettings& into) {
    TableReader reader(table, file, where);
    if (auto description = reader.string("description")) into.description = *description;
    read_variables(reader, "env_pcie_broken", into.env_pcie_broken);
    read_variables(reader, "env_broken", into.env_broken);
    reader.reject_unknown_keys({"description", "env_pcie_broken", "env_broken"});
}

void read_pod(const toml::table& table, const std::string& file, PodRecipe& into,
              const std::function<void(const std::string& architecture, const toml::node& where)>& refer_architecture) {
    TableReader reader(table, file, "[pod]");
    if (const toml::node* node = reader.node("p2p_slow_below"))
        into.p2p_slow_below = share(*node, file, "'p2p_slow_below' in [pod]");
    if (const toml::node* node = reader.node("host_copy_slow_below"))
        into.host_copy_slow_below = share(*node, file, "'host_copy_slow_below' in [pod]");
    // In MiB; at most what is still a byte count of 64 bits.
    if (const auto mib = reader.integer("shm_min_mib", 0, static_cast<std::int64_t>(kMostShmMib)))
        into.shm_min_bytes = static_cast<std::uint64_t>(*mib) << 20;
    if (const toml::node* node = reader.node("nvlink"))
        each_table(*node, file, "nvlink", [&](TableReader& row) {
            NvLinkFigure figure;
            figure.generation = whole_number(row, "generation", 1, 9);
            figure.gb_per_s_per_link =
                positive_number(row.node("gb_per_s_per_link") ? *row.node("gb_per_s_per_link") : row.raw(), file,
                                fmt::format("'gb_per_s_per_link' in {}", row.where()));
            if (auto architectures = row.string_array("architectures")) {
                figure.architectures = *architectures;
                for (const auto& architecture : figure.architectures)
                    refer_architecture(architecture, *row.node("architectures"));
            }
            figure.estimate = flag(row, "estimate");
            required_text(row, "source");
            row.reject_unknown_keys({"generation", "gb_per_s_per_link", "architectures", "estimate", "source"});
            put_by_generation(into.nvlink, std::move(figure));
        });
    if (const toml::node* node = reader.node("pcie"))
        each_table(*node, file, "pcie", [&](TableReader& row) {
            PcieFigure figure;
            figure.generation = whole_number(row, "generation", 1, 9);
            figure.x16_gb_per_s = positive_number(row.node("x16_gb_per_s") ? *row.node("x16_gb_per_s") : row.raw(),
                                                  file, fmt::format("'x16_gb_per_s' in {}", row.where()));
            figure.estimate = flag(row, "estimate");
            required_text(row, "source");
            row.reject_unknown_keys({"generation", "x16_gb_per_s", "estimate", "source"});
            put_by_generation(into.pcie, figure);
        });
    if (const toml::node* node = reader.node("known_broken_p2p"))
        each_table(*node, file, "known_broken_p2p", [&](TableReader& row) {
            KnownBrokenPeerAccess rule;
            const auto names = row.string_array("gpu_names");
            if (!names || names->empty() ||
                std::any_of(names->begin(), names->end(), [](const std::string& name) { return name.empty(); }))
                throw_at(row.node("gpu_names") ? *row.node("gpu_names") : row.raw(), file,
                         fmt::format("{} needs 'gpu_names': parts of GPU names as NVML reports them (\"RTX 40\")",
                                     row.where()));
            rule.gpu_names = *names;
            if (row.node("min_gpus")) rule.min_gpus = whole_number(row, "min_gpus", 2, 1024);
            if (row.node("max_gpus")) rule.max_gpus = whole_number(row, "max_gpus", rule.min_gpus, 1024);
            if (auto driver = row.string("driver_below")) {
                if (!Version::parse(*driver))
                    throw_at(*row.node("driver_below"), file,
                             fmt::format("'driver_below' in {} must be a driver version like \"550.40.07\", not "
                                         "\"{}\"",
                                         row.where(), echoed(*driver)));
                rule.driver_below = *driver;
            }
            rule.nvlink_pairs = flag(row, "nvlink_pairs");
            rule.source = required_text(row, "source");
            row.reject_unknown_keys({"gpu_names", "min_gpus", "max_gpus", "driver_below", "nvlink_pairs", "source"});
            into.known_broken_p2p.push_back(std::move(rule));
        });
    if (const toml::node* node = reader.node("nccl_defects"))
        each_table(*node, file, "nccl_defects", [&](TableReader& row) {
            NcclDefect defect;
            defect.name = required_text(row, "name");
            const auto versions = row.string_array("nccl_versions");
            if (!versions || versions->empty() ||
                std::any_of(versions->begin(), versions->end(),
                            [](const std::string& version) { return !Version::parse(version); }))
                throw_at(row.node("nccl_versions") ? *row.node("nccl_versions") : row.raw(), file,
                         fmt::format("{} needs 'nccl_versions': the NCCL versions it affects (\"2.27.5\")",
                                     row.where()));
            defect.nccl_versions = *versions;
            defect.min_clique_gpus = whole_number(row, "min_clique_gpus", 2, 1u << 20);
            const toml::table* workaround = row.table("workaround");
            if (!workaround || workaround->empty())
                throw_at(row.node("workaround") ? *row.node("workaround") : row.raw(), file,
                         fmt::format("{} needs 'workaround': the variables that avoid it", row.where()));
            for (const auto& [name, value] : *workaround) {
                const auto text = value.value<std::string>();
                if (!text || !is_valid_variable_name(name.str()))
                    throw_at(value, file, fmt::format("'workaround' in {} maps variable names to text", row.where()));
                defect.workaround[std::string(name.str())] = *text;
            }
            defect.source = required_text(row, "source");
            row.reject_unknown_keys({"name", "nccl_versions", "min_clique_gpus", "workaround", "source"});
            into.nccl_defects.push_back(std::move(defect));
        });
    if (const toml::table* settings = reader.table("p2p_settings"))
        read_peer_access_settings(*settings, file, "[pod.p2p_settings]", into.p2p_settings);
    reader.reject_unknown_keys({"p2p_slow_below", "host_copy_slow_below", "shm_min_mib", "nvlink", "pcie",
                                "known_broken_p2p", "p2p_settings", "nccl_defects"});
}

}  // namespace provision
