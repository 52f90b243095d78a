// The recipes' workloads, torch builds and the Python they run.
#include "recipe/recipe_reading.h"

namespace provision::recipe_reading {

void Loader::read_workload(const std::string& name, const toml::table& table, const std::string& file) {
    const std::string where = fmt::format("[workloads.{}]", shown(name));
    TableReader reader(table, file, where);
    WorkloadSpec& spec = set_.workloads[name];
    spec.name = name;
    if (auto v = reader.string("description")) spec.description = *v;
    if (const toml::table* preference = reader.table("preference")) {
        TableReader orders(*preference, file, where + " preference");
        for (const auto& [key, value] : *preference) {
            const std::string arch(key.str());
            auto list = orders.string_array(arch);
            reject_duplicates(value, file, fmt::format("'preference.{}' of {}", shown(arch), where));
            spec.preference[arch] = *list;
            spec.preference_source[arch] = source_of(value, file);
            forget_earlier_orders_of_family(spec, arch, file);
            if (arch != "cpu" && arch != "default")
                refer(Reference::architecture, arch, value, file, fmt::format("'preference' of {}", where));
            for (const auto& mechanism : *list)
                refer(Reference::mechanism, mechanism, value, file,
                      fmt::format("'preference.{}' of {}", shown(arch), where));
        }
    }
    const std::vector<std::string> allowed = reader.string_array("allow_sensitive").value_or(std::vector<std::string>{});
    for (const char* key : {"env", "gpu_env"}) {
        check_variable_names(reader.node(key), file, fmt::format("'{}' of {}", key, where));
        check_sensitive_names(reader.node(key), allowed, file, fmt::format("'{}' of {}", key, where), where);
        if (auto v = reader.string_map(key)) {
            auto& target = std::string(key) == "env" ? spec.env : spec.gpu_env;
            for (const auto& [variable, value] : *v) target[variable] = value;
        }
    }
    if (auto v = reader.string_array("override_variables")) {
        reject_duplicates(*reader.node("override_variables"), file, fmt::format("'override_variables' of {}", where));
        spec.override_variables = *v;
    }
    check_variable_names(reader.node("mechanism_env"), file, fmt::format("'mechanism_env' of {}", where));
    check_sensitive_names(reader.node("mechanism_env"), allowed, file, fmt::format("'mechanism_env' of {}", where),
                          where);
    if (const toml::table* mechanism_env = reader.table("mechanism_env")) {
        for (const auto& [key, value] : *mechanism_env) {
            const std::string variable(key.str());
            expect_table(value, file, fmt::format("'mechanism_env.{}' of {}", shown(variable), where));
            for (const auto& [mkey, mvalue] : *value.as_table()) {
                const std::string mechanism(mkey.str());
                if (!mvalue.is_string())
                    throw_at(mvalue, file,
                             fmt::format("'mechanism_env.{}.{}' of {} must be a string", shown(variable),
                                         shown(mechanism), where));
                spec.mechanism_env[variable][mechanism] = mvalue.as_string()->get();
                if (mechanism != "*")
                    refer(Reference::mechanism, mechanism, mvalue, file,
                          fmt::format("'mechanism_env.{}' of {}", shown(variable), where));
            }
        }
    }
    if (const toml::table* arguments = reader.table("arguments")) {
        TableReader flags(*arguments, file, where + " arguments");
        for (const auto& [key, value] : *arguments) {
            const std::string mechanism(key.str());
            spec.arguments[mechanism] = *flags.string_array(mechanism);
            refer(Reference::mechanism, mechanism, value, file, fmt::format("'arguments' of {}", where));
        }
    }
    if (auto v = reader.string_array("conflicting_arguments")) spec.conflicting_arguments = *v;
    if (const toml::table* settings = reader.table("p2p_settings")) {
        const std::string context = fmt::format("[workloads.{}.p2p_settings]", shown(name));
        for (const char* key : {"env_pcie_broken", "env_broken"})
            check_sensitive_names(settings->get(key), allowed, file, fmt::format("'{}' of {}", key, context), where);
        read_peer_access_settings(*settings, file, context, spec.p2p_settings);
    }
    if (const toml::table* mechanisms = reader.table("mechanisms")) {
        for (const auto& [key, value] : *mechanisms) {
            const std::string mechanism(key.str());
            const std::string context = fmt::format("[workloads.{}.mechanisms.{}]", shown(name), shown(mechanism));
            TableReader needs(expect_table(value, file, context), file, context);
            MechanismRequirements& requirements = spec.mechanism_requirements[mechanism];
            if (const toml::node* packages = needs.node("packages"))
                requirements.packages = read_packages(*packages, file, context);
            if (auto cc = needs.capability("min_compute_capability")) requirements.min_compute_capability = cc;
            if (auto cc = needs.capability("max_compute_capability")) requirements.max_compute_capability = cc;
            needs.reject_unknown_keys({"packages", "min_compute_capability", "max_compute_capability"});
            refer(Reference::mechanism, mechanism, value, file, fmt::format("'mechanisms' of {}", where));
        }
    }
    if (auto v = read_dtype_list(reader, "dtype_preference", file, where); !v.empty()) spec.dtype_preference = v;
    if (const toml::table* arguments = reader.table("dtype_arguments")) {
        TableReader flags(*arguments, file, where + " dtype_arguments");
        for (const auto& [key, value] : *arguments) {
            const std::string dtype(key.str());
            spec.dtype_arguments[dtype] = *flags.string_array(dtype);
            refer(Reference::dtype, dtype, value, file, fmt::format("'dtype_arguments' of {}", where));
        }
    }
    reader.reject_unknown_keys({"description", "preference", "env", "gpu_env", "override_variables",
                                "mechanism_env", "arguments", "conflicting_arguments", "mechanisms",
                                "allow_sensitive", "dtype_preference", "dtype_arguments", "p2p_settings"});
}

void Loader::read_torch_build(const std::string& name, const toml::table& table, const std::string& file) {
    const std::string where = fmt::format("[torch_builds.\"{}\"]", shown(name));
    TableReader reader(table, file, where);
    TorchBuildSpec& spec = set_.torch_builds[name];
    spec.name = name;
    auto required = [&](const char* key) {
        auto value = reader.string(key);
        if (!value) throw_at(table, file, fmt::format("{} needs '{}'", where, key));
        return *value;
    };
    spec.index = required("index");
    spec.cuda = required("cuda");
    if (!ComputeCapability::parse(spec.cuda))  // CUDA versions are MAJOR.MINOR like capabilities
        throw_at(*reader.node("cuda"), file,
                 fmt::format("'cuda' of {} must be MAJOR.MINOR, not \"{}\"", where, shown(spec.cuda)));
    spec.torch = required("torch");
    try {
        const Requirement releases = Requirement::parse("torch" + spec.torch);
        if (releases.name != "torch" || releases.specifiers.empty())
            throw std::invalid_argument(fmt::format("\"{}\" is not a version specifier like \">=2.7,<2.9\"",
                                                    shown(spec.torch)));
    } catch (const std::invalid_argument& error) {
        throw_at(*reader.node("torch"), file, fmt::format("'torch' of {}: {}", where, error.what()));
    }
    spec.sass.clear();
    for (const auto& text : reader.string_array("sass").value_or(std::vector<std::string>{})) {
        const auto capability = ComputeCapability::parse(text);
        if (!capability)
            throw_at(*reader.node("sass"), file,
                     fmt::format("'sass' of {} holds \"{}\", which is not a compute capability", where, shown(text)));
        spec.sass.push_back(*capability);
    }
    reader.reject_unknown_keys({"index", "cuda", "torch", "sass"});
}

void Loader::read_python(const toml::table& table, const std::string& file) {
    TableReader reader(table, file, "[python]");
    if (auto v = reader.string_array("site_packages")) set_.site_packages = *v;
    reader.reject_unknown_keys({"site_packages"});
}

void Loader::forget_earlier_orders_of_family(WorkloadSpec& spec, const std::string& key,
                                             const std::string& file) const {
    for (const auto& arch : set_.architectures) {
        if (arch.family.empty() || arch.family != key) continue;
        const auto source = spec.preference_source.find(arch.name);
        if (source == spec.preference_source.end() || source->second.file == file) continue;
        spec.preference.erase(arch.name);
        spec.preference_source.erase(source);
    }
}

}  // namespace provision::recipe_reading
