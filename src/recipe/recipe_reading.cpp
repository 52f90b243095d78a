// What every reader of a recipe table checks: names, keys, package lists, versions.
#include "recipe/recipe_reading.h"

namespace provision::recipe_reading {

// A family's name: what preference orders and per-architecture tables are
// keyed by, and what node labels publish.
bool is_recipe_name(std::string_view text) {
    return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    });
}

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

}  // namespace provision::recipe_reading
