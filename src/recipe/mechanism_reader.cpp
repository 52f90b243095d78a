// The recipes' architectures, mechanisms, checks and features.
#include "recipe/recipe_reading.h"

namespace provision::recipe_reading {

void Loader::read_architectures(const toml::table& table, const std::string& file) {
    for (const auto& [key, value] : table) {
        const std::string name(key.str());
        const std::string where = fmt::format("[architectures.{}]", shown(name));
        TableReader reader(expect_table(value, file, where), file, where);
        auto it = std::find_if(set_.architectures.begin(), set_.architectures.end(),
                               [&](const ArchitectureSpec& a) { return a.name == name; });
        if (it == set_.architectures.end()) {
            ArchitectureSpec added;
            added.name = name;
            set_.architectures.push_back(std::move(added));
            it = std::prev(set_.architectures.end());
        }
        if (auto list = reader.string_array("compute_capabilities")) {
            it->compute_capabilities.clear();
            for (const auto& text : *list) {
                const auto cc = ComputeCapability::parse(text);
                if (!cc)
                    throw_at(*reader.node("compute_capabilities"), file,
                             fmt::format("'{}' in {} is not a compute capability like \"8.6\"", shown(text), where));
                it->compute_capabilities.push_back(*cc);
            }
        }
        if (auto cc = reader.capability("min_compute_capability")) it->bounds.min = cc;
        if (auto cc = reader.capability("max_compute_capability")) it->bounds.max = cc;
        if (auto family = reader.string("family")) {
            if (!is_recipe_name(*family))
                throw_at(*reader.node("family"), file,
                         fmt::format("'family' of {} must be a name of lowercase letters, digits and '_', not \"{}\"",
                                     where, shown(*family)));
            it->family = *family == name ? std::string() : *family;
        }
        reader.reject_unknown_keys(
            {"compute_capabilities", "min_compute_capability", "max_compute_capability", "family"});
        if (it->compute_capabilities.empty() && !it->bounds.min && !it->bounds.max)
            throw_at(value, file, fmt::format("{} names no compute capability", where));
    }
}

void Loader::read_mechanism(const std::string& name, const toml::table& table, const std::string& file) {
    const std::string where = fmt::format("[mechanisms.{}]", shown(name));
    TableReader reader(table, file, where);
    MechanismSpec& spec = set_.mechanisms[name];
    spec.name = name;
    if (auto v = reader.string("description")) spec.description = *v;
    if (auto v = reader.string_array("aliases")) {
        reject_duplicates(*reader.node("aliases"), file, fmt::format("'aliases' of {}", where));
        spec.aliases = *v;
    }
    if (const toml::node* packages = reader.node("packages"))
        spec.packages = read_packages(*packages, file, where);
    if (auto cc = reader.capability("min_compute_capability")) spec.compute_capability.min = cc;
    if (auto cc = reader.capability("max_compute_capability")) spec.compute_capability.max = cc;
    if (auto cc = reader.capability("assumed_max_compute_capability")) spec.assumed_max_compute_capability = cc;
    spec.requires_gpu = spec.compute_capability.min.has_value() || spec.compute_capability.max.has_value();
    if (const toml::node* per_architecture = reader.node("packages_for")) {
        const toml::table* table = per_architecture->as_table();
        if (!table) throw_at(*per_architecture, file, fmt::format("'packages_for' of {} must be a table", where));
        for (const auto& [arch, packages] : *table) {
            const std::string architecture(arch.str());
            spec.packages_for[architecture] = read_packages(packages, file, where);
            refer(Reference::architecture, architecture, packages, file, fmt::format("'packages_for' of {}", where));
        }
    }
    if (auto v = reader.string("min_driver_cuda")) spec.min_driver_cuda = *v;
    if (auto v = reader.string_map("min_driver_cuda_for")) {
        for (const auto& [arch, version] : *v) {
            spec.min_driver_cuda_for[arch] = version;
            refer(Reference::architecture, arch, *reader.node("min_driver_cuda_for"), file,
                  fmt::format("'min_driver_cuda_for' of {}", where));
        }
    }
    if (auto v = reader.string_map("min_driver_cuda_with")) {
        for (const auto& [package, version] : *v) {
            if (!is_package_name(package))
                throw_at(*reader.node("min_driver_cuda_with"), file,
                         fmt::format("'min_driver_cuda_with' of {} names \"{}\", which is not a package name",
                                     where, shown(package)));
            check_cuda_version(version, *reader.node("min_driver_cuda_with"), file,
                               fmt::format("'min_driver_cuda_with.{}' of {}", shown(package), where));
            spec.min_driver_cuda_with[normalize_package_name(package)] = version;
        }
    }
    if (const toml::node* pairs = reader.node("same_versions")) spec.same_versions = read_package_pairs(*pairs, file, where);
    if (auto v = reader.string("min_cudnn")) {
        if (!Version::parse(*v))
            throw_at(*reader.node("min_cudnn"), file,
                     fmt::format("'min_cudnn' of {} must be a version like \"9.15.1\", not \"{}\"", where,
                                 shown(*v)));
        spec.min_cudnn = *v;
    }
    if (auto v = reader.string_array("checks")) {
        reject_duplicates(*reader.node("checks"), file, fmt::format("'checks' of {}", where));
        spec.checks = *v;
        for (const auto& check : *v)
            refer(Reference::check, check, *reader.node("checks"), file, fmt::format("'checks' of {}", where));
    }
    if (auto v = read_dtype_list(reader, "dtype_preference", file, where); !v.empty()) spec.dtype_preference = v;
    reader.reject_unknown_keys({"description", "aliases", "packages", "packages_for", "min_compute_capability",
                                "max_compute_capability", "assumed_max_compute_capability", "min_driver_cuda",
                                "min_driver_cuda_for", "min_driver_cuda_with", "same_versions", "min_cudnn",
                                "checks", "dtype_preference"});
}

void Loader::read_check(const std::string& name, const toml::table& table, const std::string& file) {
    const std::string where = fmt::format("[checks.\"{}\"]", shown(name));
    // A recipe describes a bundled check; one the binary does not carry would
    // fail only when a GPU ran it.
    if (!kernels::find_check(name))
        throw_at(table, file,
                 fmt::format("{}: provision has no check called '{}' (its checks: {})", where, shown(name),
                             fmt::join(kernels::check_names(), ", ")));
    TableReader reader(table, file, where);
    CheckSpec& spec = set_.checks[name];
    spec.name = name;
    if (auto v = reader.string("description")) spec.description = *v;
    if (auto cc = reader.capability("min_compute_capability")) spec.compute_capability.min = cc;
    if (auto cc = reader.capability("max_compute_capability")) spec.compute_capability.max = cc;
    reader.reject_unknown_keys({"description", "min_compute_capability", "max_compute_capability"});
}

void Loader::read_feature(const std::string& name, const toml::table& table, const std::string& file) {
    const std::string where = fmt::format("[features.{}]", shown(name));
    // A feature is a node label of its own name (src/publish/node_labels.cpp).
    if (const auto problem = reserved_label_problem(name)) throw_at(table, file, fmt::format("{}: {}", where, *problem));
    TableReader reader(table, file, where);
    FeatureSpec& spec = set_.features[name];
    spec.name = name;
    if (auto v = reader.string("description")) spec.description = *v;
    if (auto cc = reader.capability("min_compute_capability")) spec.compute_capability.min = cc;
    if (auto cc = reader.capability("max_compute_capability")) spec.compute_capability.max = cc;
    if (auto v = reader.string_array("checks")) {
        reject_duplicates(*reader.node("checks"), file, fmt::format("'checks' of {}", where));
        spec.checks = *v;
        for (const auto& check : *v)
            refer(Reference::check, check, *reader.node("checks"), file, fmt::format("'checks' of {}", where));
    }
    const std::vector<std::string> allowed = reader.string_array("allow_sensitive").value_or(std::vector<std::string>{});
    for (const char* key : {"env_enabled", "env_disabled"}) {
        check_variable_names(reader.node(key), file, fmt::format("'{}' of {}", key, where));
        check_sensitive_names(reader.node(key), allowed, file, fmt::format("'{}' of {}", key, where), where);
    }
    if (auto v = reader.string_map("env_enabled")) spec.env_enabled = *v;
    if (auto v = reader.string_map("env_disabled")) spec.env_disabled = *v;
    if (const toml::node* flag = reader.node("number_format")) {
        if (!flag->is_boolean()) throw_at(*flag, file, fmt::format("'number_format' of {} must be true or false", where));
        spec.number_format = flag->as_boolean()->get();
    }
    if (auto v = reader.string("dtype")) {
        if (v->empty() || !std::all_of(v->begin(), v->end(), [](char c) {
                return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
            }))
            throw_at(*reader.node("dtype"), file,
                     fmt::format("'dtype' of {} must be a torch dtype name like \"bfloat16\", not \"{}\"", where,
                                 shown(*v)));
        spec.dtype = *v;
    }
    if (const toml::node* gates = reader.node("package_gates")) spec.package_gates = read_packages(*gates, file, where);
    if (const toml::node* per_architecture = reader.node("package_gates_for")) {
        const toml::table* gates = per_architecture->as_table();
        if (!gates) throw_at(*per_architecture, file, fmt::format("'package_gates_for' of {} must be a table", where));
        for (const auto& [arch, packages] : *gates) {
            const std::string architecture(arch.str());
            spec.package_gates_for[architecture] = read_packages(packages, file, where);
            refer(Reference::architecture, architecture, packages, file,
                  fmt::format("'package_gates_for' of {}", where));
        }
    }
    if (!spec.dtype.empty() && !spec.number_format)
        throw_at(*reader.node("dtype"), file, fmt::format("{} names a dtype but is no number_format", where));
    reader.reject_unknown_keys({"description", "min_compute_capability", "max_compute_capability", "checks",
                                "env_enabled", "env_disabled", "allow_sensitive", "number_format", "dtype",
                                "package_gates", "package_gates_for"});
}

}  // namespace provision::recipe_reading
