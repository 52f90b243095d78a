// The recipes' policy, dtypes and node labels.
#include "recipe/recipe_reading.h"

namespace provision::recipe_reading {

void Loader::read_node_labels(const toml::table& table, const std::string& file) {
    TableReader reader(table, file, "[node_labels]");
    if (auto prefix = reader.string("prefix")) {
        // Checked where it is set, whether or not this run writes labels: an
        // empty prefix is no way to ask for the default.
        if (const auto problem = label_prefix_problem(*prefix))
            throw_at(*reader.node("prefix"), file,
                     fmt::format("[node_labels] prefix \"{}\" cannot name Kubernetes labels: {}", shown(*prefix),
                                 *problem));
        set_.node_labels.prefix = *prefix;
        set_.node_labels.source = source_of(*reader.node("prefix"), file);
    }
    reader.reject_unknown_keys({"prefix"});
}

void Loader::read_policy(const toml::table& table, const std::string& file) {
    TableReader reader(table, file, "[policy]");
    std::vector<std::string> known = health::gpu_signals();
    const auto& faults = health::driver_fault_classes();
    known.insert(known.end(), faults.begin(), faults.end());
    const auto& package_findings = health::package_signals();
    known.insert(known.end(), package_findings.begin(), package_findings.end());
    const auto& pod_findings = health::pod_signals();
    known.insert(known.end(), pod_findings.begin(), pod_findings.end());
    const auto& network_findings = health::network_signals();
    known.insert(known.end(), network_findings.begin(), network_findings.end());
    const auto& fabric_findings = health::fabric_signals();
    known.insert(known.end(), fabric_findings.begin(), fabric_findings.end());
    for (const auto& key : known) {
        const auto value = reader.string(key);
        if (!value) continue;
        if (const auto level = parse_health_level(*value)) set_.policy.levels[key] = *level;
        else
            throw_at(*reader.node(key), file,
                     fmt::format("'{}' in [policy] must be \"ok\", \"degraded\" or \"failed\", not \"{}\"", key,
                                 shown(*value)));
    }
    const auto count_limit = [&](const char* key, std::uint64_t& into) {
        if (const auto limit = reader.integer(key, 0, std::numeric_limits<std::int64_t>::max()))
            into = static_cast<std::uint64_t>(*limit);
        known.push_back(key);
    };
    count_limit("memory_in_use_min_mib", set_.policy.memory_in_use_min_mib);
    count_limit("retired_pages_max", set_.policy.retired_pages_max);
    count_limit("uncorrectable_remapped_rows_max", set_.policy.uncorrectable_remapped_rows_max);
    if (const auto percent = reader.integer("proof_bandwidth_min_percent", 0, 100))
        set_.policy.proof_bandwidth_min_percent = static_cast<std::uint64_t>(*percent);
    known.push_back("proof_bandwidth_min_percent");
    if (const auto rate = reader.integer("nvlink_crc_per_second_max", 0, 1000000000))
        set_.policy.nvlink_crc_per_second_max = static_cast<double>(*rate);
    known.push_back("nvlink_crc_per_second_max");
    if (const toml::node* xids = reader.node("xid_critical_list")) {
        const toml::array* list = xids->as_array();
        if (!list) throw_at(*xids, file, "'xid_critical_list' in [policy] must be an array of Xid numbers");
        set_.policy.critical_xids.clear();
        for (const toml::node& element : *list)
            set_.policy.critical_xids.push_back(
                static_cast<int>(integer_in_range(element, file, "each of 'xid_critical_list' (an Xid)", 1, 9999)));
    }
    known.push_back("xid_critical_list");
    reader.reject_unknown_keys(known);
}

std::vector<std::string> Loader::read_dtype_list(TableReader& reader, const std::string& key, const std::string& file,
                                                 const std::string& where) {
    auto list = reader.string_array(key);
    if (!list) return {};
    const toml::node& node = *reader.node(key);
    reject_duplicates(node, file, fmt::format("'{}' of {}", key, where));
    if (list->empty()) throw_at(node, file, fmt::format("'{}' of {} names no dtype", key, where));
    for (const auto& dtype : *list) refer(Reference::dtype, dtype, node, file, fmt::format("'{}' of {}", key, where));
    return *list;
}

void Loader::read_dtypes(const toml::table& table, const std::string& file) {
    TableReader reader(table, file, "[dtypes]");
    if (auto v = read_dtype_list(reader, "preference", file, "[dtypes]"); !v.empty()) set_.dtype_preference = v;
    reader.reject_unknown_keys({"preference"});
}

}  // namespace provision::recipe_reading
