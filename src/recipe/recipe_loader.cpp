#include "recipe/recipe_loader.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include "kernels/check_catalog.h"
#include "core/error.h"
#include "core/label_rules.h"
#include "core/regular_file.h"
#include "core/states.h"
#include "core/suggest.h"
#include "core/text.h"
#include "packages/python_packages.h"
#include "recipe/builtin_recipes.h"
#include "recipe/health_signals.h"
#include "recipe/node_label_names.h"
#include "recipe/pod_reader.h"
#include "recipe/sensitive_variables.h"
#include "recipe/throughput_reader.h"
#include "toml/toml_reader.h"

namespace fs = std::filesystem;

namespace provision {
namespace {

// A name used in one place that must be defined somewhere in the merged set.
struct Reference {
    enum Kind { mechanism, check, architecture, dtype } kind;
    std::string name;
    SourceRef where;
    std::string context;
};

class Loader {
public:
    void load_path(const std::string& path);
    // A recipe held in memory; `name` stands for its file in messages.
    void load_text(const std::string& name, std::string_view text);
    RecipeSet finish();

private:
    void load_file(const std::string& file);
    void load_table(const toml::table& root, const std::string& file);
    void read_architectures(const toml::table& table, const std::string& file);
    void read_mechanism(const std::string& name, const toml::table& table, const std::string& file);
    void read_check(const std::string& name, const toml::table& table, const std::string& file);
    void read_feature(const std::string& name, const toml::table& table, const std::string& file);
    void read_workload(const std::string& name, const toml::table& table, const std::string& file);
    void read_python(const toml::table& table, const std::string& file);
    void read_torch_build(const std::string& name, const toml::table& table, const std::string& file);
    void read_policy(const toml::table& table, const std::string& file);
    void read_dtypes(const toml::table& table, const std::string& file);
    // A list of dtype names ("dtype_preference"), each checked once all files are read.
    std::vector<std::string> read_dtype_list(TableReader& reader, const std::string& key, const std::string& file,
                                             const std::string& where);
    void read_node_labels(const toml::table& table, const std::string& file);
    void refer(Reference::Kind kind, const std::string& name, const toml::node& node, const std::string& file,
               const std::string& context);
    // A family's order set in `file` replaces the orders of its
    // architectures that earlier files set: the later recipe wins, whichever
    // of the two it names.
    void forget_earlier_orders_of_family(WorkloadSpec& spec, const std::string& key, const std::string& file) const;
    void check_references() const;
    void check_families() const;

    RecipeSet set_;
    std::vector<Reference> references_;
};

// A family's name: what preference orders and per-architecture tables are
// keyed by, and what node labels publish.
bool is_recipe_name(std::string_view text) {
    return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    });
}

// A name or value of a recipe as a message shows it (core/text.h, Echoed), so
// no recipe can put control characters in a log line.
Echoed shown(std::string_view text) { return echoed(text); }

const toml::table& expect_table(const toml::node& node, const std::string& file, const std::string& what) {
    if (!node.is_table()) throw_at(node, file, fmt::format("{} must be a table", what));
    return *node.as_table();
}

SourceRef source_of_key(const toml::key& key, const std::string& file) {
    const auto& region = key.source();
    return {region.path ? *region.path : file, static_cast<int>(region.begin.line),
            static_cast<int>(region.begin.column)};
}

// Every key of the table at `node` names an environment variable: one the
// shell cannot take ("A=B", "1ABC", "A B", "") fails here, at load time and
// so in --check, with its position, rather than when the env file is written.
void check_variable_names(const toml::node* node, const std::string& file, const std::string& where) {
    if (!node || !node->is_table()) return;  // the typed reader reports a wrong type
    for (const auto& [key, value] : *node->as_table()) {
        if (is_valid_variable_name(key.str())) continue;
        throw Error(ExitCode::invalid_input,
                    fmt::format("{}: '{}' in {} is not an environment variable name (letters, digits and '_', "
                                "not starting with a digit)",
                                echoed_path(source_of_key(key, file).str()), shown(key.str()), where));
    }
}

// Each key of the table at `node` that names a sensitive variable
// (recipe/sensitive_variables.h) must be listed in `allowed`, the same
// table's `allow_sensitive`.
void check_sensitive_names(const toml::node* node, const std::vector<std::string>& allowed, const std::string& file,
                           const std::string& where, const std::string& owner) {
    if (!node || !node->is_table()) return;
    for (const auto& [key, value] : *node->as_table()) {
        const std::string_view name = key.str();
        if (!is_sensitive_variable(name) || std::find(allowed.begin(), allowed.end(), name) != allowed.end()) continue;
        throw Error(ExitCode::invalid_input,
                    fmt::format("{}: '{}' in {} is a loader, start-up or device-selection variable: a recipe sets it "
                                "only when {} lists it in allow_sensitive",
                                echoed_path(source_of_key(key, file).str()), shown(name), where, owner));
    }
}

// A list naming one entry twice is a mistake (and, at tens of thousands of
// entries, a way to make every later step slow): refused with both places.
void reject_duplicates(const toml::node& list, const std::string& file, const std::string& where) {
    const toml::array* array = list.as_array();
    if (!array) return;
    std::unordered_map<std::string_view, const toml::node*> seen;
    seen.reserve(array->size());
    for (const toml::node& entry : *array) {
        const auto* text = entry.as_string();
        if (!text) continue;
        const auto [it, added] = seen.emplace(text->get(), &entry);
        if (!added)
            throw_at(entry, file,
                     fmt::format("'{}' appears twice in {} (first at {})", shown(text->get()), where,
                                 source_of(*it->second, file).str()));
    }
}

// `packages`: requirement strings, or arrays of alternative requirement strings.
std::vector<PackageAlternatives> read_packages(const toml::node& packages, const std::string& file,
                                               const std::string& where) {
    const toml::array* array = packages.as_array();
    if (!array) throw_at(packages, file, fmt::format("'packages' in {} must be an array", where));
    std::vector<PackageAlternatives> result;
    for (const toml::node& entry : *array) {
        PackageAlternatives alternatives;
        auto add = [&](const toml::node& node) {
            if (!node.is_string())
                throw_at(node, file,
                         fmt::format("'packages' in {} holds requirement strings, or arrays of "
                                     "alternative requirement strings",
                                     where));
            const std::string text = node.as_string()->get();
            try {
                (void)Requirement::parse(text);
            } catch (const std::invalid_argument& error) {
                throw_at(node, file, fmt::format("bad package requirement in {}: {}", where, error.what()));
            }
            alternatives.any_of.push_back(text);
        };
        if (const toml::array* choices = entry.as_array()) {
            for (const toml::node& choice : *choices) add(choice);
            if (alternatives.any_of.empty())
                throw_at(entry, file, fmt::format("empty alternatives in 'packages' of {}", where));
        } else {
            add(entry);
        }
        result.push_back(alternatives);
    }
    return result;
}

// A project name as PEP 508 allows it (letters, digits, '.', '_', '-',
// alphanumeric at both ends).
bool is_package_name(std::string_view text) {
    const auto alnum = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    };
    return !text.empty() && alnum(text.front()) && alnum(text.back()) &&
           std::all_of(text.begin(), text.end(), [&](char c) { return alnum(c) || c == '.' || c == '_' || c == '-'; });
}

// A CUDA version as the driver reports it: MAJOR.MINOR.
void check_cuda_version(const std::string& text, const toml::node& where_node, const std::string& file,
                        const std::string& what) {
    if (!ComputeCapability::parse(text))  // CUDA versions are MAJOR.MINOR like capabilities
        throw_at(where_node, file, fmt::format("{} must be a CUDA version like \"13.0\", not \"{}\"", what,
                                               shown(text)));
}

// `same_versions`: an array of [package, package] pairs.
std::vector<std::pair<std::string, std::string>> read_package_pairs(const toml::node& node, const std::string& file,
                                                                    const std::string& where) {
    const toml::array* array = node.as_array();
    const std::string what = fmt::format("'same_versions' of {}", where);
    if (!array) throw_at(node, file, fmt::format("{} must be an array of [package, package] pairs", what));
    std::vector<std::pair<std::string, std::string>> pairs;
    for (const toml::node& entry : *array) {
        const toml::array* pair = entry.as_array();
        if (!pair || pair->size() != 2 || !(*pair)[0].is_string() || !(*pair)[1].is_string())
            throw_at(entry, file, fmt::format("{} holds [package, package] pairs of two names", what));
        const std::string first = (*pair)[0].as_string()->get();
        const std::string second = (*pair)[1].as_string()->get();
        for (const auto& name : {first, second})
            if (!is_package_name(name))
                throw_at(entry, file, fmt::format("{} names \"{}\", which is not a package name", what, shown(name)));
        if (normalize_package_name(first) == normalize_package_name(second))
            throw_at(entry, file, fmt::format("{} pairs \"{}\" with itself", what, shown(first)));
        pairs.emplace_back(normalize_package_name(first), normalize_package_name(second));
    }
    return pairs;
}

void Loader::load_path(const std::string& path) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
        std::vector<std::string> files;
        for (const auto& entry : fs::recursive_directory_iterator(path, ec))
            if (entry.is_regular_file() && entry.path().extension() == ".toml") files.push_back(entry.path());
        if (ec)
            throw Error(ExitCode::invalid_input,
                        fmt::format("{}: cannot read recipe folder: {}", echoed_path(path), ec.message()));
        std::sort(files.begin(), files.end());
        for (const auto& file : files) load_file(file);
        return;
    }
    if (!fs::exists(path, ec))
        throw Error(ExitCode::invalid_input,
                    fmt::format("{}: recipe file or folder not found", echoed_path(path)));
    load_file(path);
}

void Loader::load_file(const std::string& file) {
    // Only a regular file, at most as large as a remote recipe may be: a FIFO
    // or /dev/zero given as a recipe must neither block nor fill memory.
    load_table(parse_toml(read_regular_file_or_throw(file, kMaxRecipeBytes), file), file);
}

void Loader::load_text(const std::string& name, std::string_view text) { load_table(parse_toml(text, name), name); }

void Loader::load_table(const toml::table& root, const std::string& file) {
    set_.files.push_back(file);
    TableReader top(root, file, "the recipe's top level");
    if (const toml::table* t = top.table("architectures")) read_architectures(*t, file);
    for (const auto& [section, reader] :
         std::initializer_list<std::pair<const char*, void (Loader::*)(const std::string&, const toml::table&,
                                                                        const std::string&)>>{
             {"mechanisms", &Loader::read_mechanism},
             {"checks", &Loader::read_check},
             {"features", &Loader::read_feature},
             {"workloads", &Loader::read_workload},
             {"torch_builds", &Loader::read_torch_build}}) {
        if (const toml::table* t = top.table(section)) {
            for (const auto& [key, value] : *t) {
                const std::string name(key.str());
                (this->*reader)(name, expect_table(value, file, fmt::format("[{}.{}]", section, shown(name))), file);
            }
        }
    }
    if (const toml::table* t = top.table("python")) read_python(*t, file);
    if (const toml::table* t = top.table("throughput"))
        read_throughput(*t, file, set_.throughput, [&](const std::string& check, const toml::node& node) {
            refer(Reference::check, check, node, file, "[throughput]");
        });
    if (const toml::table* t = top.table("policy")) read_policy(*t, file);
    if (const toml::table* t = top.table("dtypes")) read_dtypes(*t, file);
    if (const toml::table* t = top.table("pod"))
        read_pod(*t, file, set_.pod, [&](const std::string& architecture, const toml::node& node) {
            refer(Reference::architecture, architecture, node, file, "[[pod.nvlink]]");
        });
    if (const toml::table* t = top.table("node_labels")) read_node_labels(*t, file);
    top.reject_unknown_keys(
        {"architectures", "mechanisms", "checks", "features", "workloads", "python", "throughput", "policy",
         "torch_builds", "dtypes", "pod", "node_labels"});
}

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

void Loader::refer(Reference::Kind kind, const std::string& name, const toml::node& node, const std::string& file,
                   const std::string& context) {
    references_.push_back({kind, name, source_of(node, file), context});
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

void Loader::check_families() const {
    for (const auto& arch : set_.architectures) {
        if (arch.family.empty()) continue;
        const ArchitectureSpec* other = set_.architecture(arch.family);
        if (other && other->family_name() != arch.family)
            throw Error(ExitCode::invalid_input,
                        fmt::format("[architectures.{}]: its family '{}' is the name of an architecture of family "
                                    "'{}': a name is one or the other",
                                    shown(arch.name), shown(arch.family), shown(other->family_name())));
    }
}

void Loader::check_references() const {
    std::vector<std::string> architectures, checks;
    for (const auto& a : set_.architectures) architectures.push_back(a.name);
    for (const auto& family : set_.family_names())
        if (std::find(architectures.begin(), architectures.end(), family) == architectures.end())
            architectures.push_back(family);
    for (const auto& [name, spec] : set_.checks) checks.push_back(name);
    const std::vector<std::string> mechanisms = set_.mechanism_names();
    const std::vector<std::string> dtypes = set_.dtype_names();
    for (const auto& ref : references_) {
        const std::vector<std::string>& known = ref.kind == Reference::mechanism ? mechanisms
                                                : ref.kind == Reference::check   ? checks
                                                : ref.kind == Reference::dtype   ? dtypes
                                                                                 : architectures;
        if (std::find(known.begin(), known.end(), ref.name) != known.end()) continue;
        const char* what = ref.kind == Reference::mechanism ? "mechanism"
                           : ref.kind == Reference::check   ? "check"
                           : ref.kind == Reference::dtype   ? "dtype"
                                                            : "architecture";
        std::string message = fmt::format("{}: unknown {} '{}' in {}", echoed_path(ref.where.str()), what,
                                          shown(ref.name), ref.context);
        const std::string hint = closest_match(ref.name, known);
        if (!hint.empty()) message += fmt::format("; did you mean '{}'?", shown(hint));
        std::vector<std::string> known_names;
        for (const auto& name : known) known_names.push_back(fmt::format("{}", shown(name)));
        message += fmt::format(" (known: {}{})", fmt::join(known_names, ", "),
                               ref.kind == Reference::architecture ? "; also 'cpu' and 'default' in preferences"
                                                                   : "");
        throw Error(ExitCode::invalid_input, printable(message, kLongestMessage));
    }
}

RecipeSet Loader::finish() {
    check_families();
    check_references();
    if (set_.mechanisms.empty()) throw Error(ExitCode::invalid_input, "the recipes define no mechanism");
    return std::move(set_);
}

}  // namespace

RecipeSet load_recipes(const std::vector<std::string>& paths) {
    Loader loader;
    for (const auto& path : paths) loader.load_path(path);
    return loader.finish();
}

RecipeSet load_recipes_over_builtins(const std::optional<std::string>& builtin_folder,
                                    const std::vector<std::string>& paths) {
    Loader loader;
    if (builtin_folder) {
        loader.load_path(*builtin_folder);
    } else {
        for (const EmbeddedRecipe& recipe : embedded_recipes())
            loader.load_text(embedded_recipe_name(recipe), recipe.text);
    }
    for (const auto& path : paths) loader.load_path(path);
    return loader.finish();
}

}  // namespace provision
