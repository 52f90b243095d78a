// The recipe loader's parts, shared by the files that read each kind of
// table (mechanism_reader.cpp, workload_reader.cpp, policy_reader.cpp) and
// the loader that merges them (recipe_loader.cpp).  Internal to recipe/.
#pragma once

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

#include "recipe/recipe_loader.h"

namespace provision::recipe_reading {

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

// A name or value of a recipe as a message shows it (core/text.h, Echoed), so
// no recipe can put control characters in a log line.
inline Echoed shown(std::string_view text) { return echoed(text); }

// A family's name: what preference orders and per-architecture tables are
// keyed by, and what node labels publish.
bool is_recipe_name(std::string_view text);

const toml::table& expect_table(const toml::node& node, const std::string& file, const std::string& what);

SourceRef source_of_key(const toml::key& key, const std::string& file);

// Every key of the table at `node` names an environment variable: one the
// shell cannot take ("A=B", "1ABC", "A B", "") fails here, at load time and
// so in --check, with its position, rather than when the env file is written.
void check_variable_names(const toml::node* node, const std::string& file, const std::string& where);

// Each key of the table at `node` that names a sensitive variable
// (recipe/sensitive_variables.h) must be listed in `allowed`, the same
// table's `allow_sensitive`.
void check_sensitive_names(const toml::node* node, const std::vector<std::string>& allowed, const std::string& file,
                           const std::string& where, const std::string& owner);

// A list naming one entry twice is a mistake (and, at tens of thousands of
// entries, a way to make every later step slow): refused with both places.
void reject_duplicates(const toml::node& list, const std::string& file, const std::string& where);

// `packages`: requirement strings, or arrays of alternative requirement strings.
std::vector<PackageAlternatives> read_packages(const toml::node& packages, const std::string& file,
                                               const std::string& where);

// A project name as PEP 508 allows it (letters, digits, '.', '_', '-',
// alphanumeric at both ends).
bool is_package_name(std::string_view text);

// A CUDA version as the driver reports it: MAJOR.MINOR.
void check_cuda_version(const std::string& text, const toml::node& where_node, const std::string& file,
                        const std::string& what);

// `same_versions`: an array of [package, package] pairs.
std::vector<std::pair<std::string, std::string>> read_package_pairs(const toml::node& node, const std::string& file,
                                                                    const std::string& where);

}  // namespace provision::recipe_reading
