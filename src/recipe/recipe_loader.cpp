#include "recipe/recipe_loader.h"

#include <filesystem>

#include "recipe/recipe_reading.h"

namespace fs = std::filesystem;

namespace provision {
namespace recipe_reading {

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

void Loader::refer(Reference::Kind kind, const std::string& name, const toml::node& node, const std::string& file,
                   const std::string& context) {
    references_.push_back({kind, name, source_of(node, file), context});
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

}  // namespace recipe_reading

using recipe_reading::Loader;

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

