// Fuzz target: the recipe loader, on a recipe given as bytes.  The input is
// loaded alone and, where it names things only they define, merged over the
// built-in recipes (as a user's --recipe is).  Only provision::Error(invalid_input) may come out of a bad recipe;
// a recipe that loads must hold together: every name it refers to exists.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "fuzz/fuzz_support.h"
#include "packages/version.h"
#include "recipe/recipe_loader.h"

namespace fuzz::recipe {

inline bool contains(const std::vector<std::string>& list, const std::string& item) {
    return std::find(list.begin(), list.end(), item) != list.end();
}

// An architecture's name or a family's: what per-architecture keys name.
inline bool architecture_or_family(const provision::RecipeSet& set, const std::string& name) {
    return set.architecture(name) != nullptr || contains(set.family_names(), name);
}

inline void check_loaded(const provision::RecipeSet& set, const std::string& path) {
    FUZZ_CHECK(contains(set.files, path));
    FUZZ_CHECK(!set.mechanisms.empty());
    for (const auto& [name, mechanism] : set.mechanisms) {
        FUZZ_CHECK(set.canonical_mechanism(name).has_value());
        for (const auto& check : mechanism.checks) FUZZ_CHECK(set.checks.count(check) == 1);
        for (const auto& [architecture, version] : mechanism.min_driver_cuda_for)
            FUZZ_CHECK(architecture_or_family(set, architecture));
        for (const auto& [architecture, packages] : mechanism.packages_for)
            FUZZ_CHECK(architecture_or_family(set, architecture));
        for (const auto& [first, second] : mechanism.same_versions) FUZZ_CHECK(first != second);
        FUZZ_CHECK(mechanism.min_cudnn.empty() || provision::Version::parse(mechanism.min_cudnn).has_value());
    }
    for (const auto& architecture : set.architectures) {
        // A family is never the name of an architecture of another family.
        const provision::ArchitectureSpec* other = set.architecture(architecture.family_name());
        FUZZ_CHECK(!other || other->family_name() == architecture.family_name());
    }
    const auto dtypes = set.dtype_names();
    for (const auto& [name, feature] : set.features) {
        for (const auto& check : feature.checks) FUZZ_CHECK(set.checks.count(check) == 1);
        FUZZ_CHECK(feature.dtype.empty() || feature.number_format);
        for (const auto& [architecture, gates] : feature.package_gates_for)
            FUZZ_CHECK(architecture_or_family(set, architecture));
    }
    for (const auto& dtype : set.dtype_preference) FUZZ_CHECK(contains(dtypes, dtype));
    for (const auto& [name, mechanism] : set.mechanisms)
        for (const auto& dtype : mechanism.dtype_preference) FUZZ_CHECK(contains(dtypes, dtype));
    for (const auto& [name, workload] : set.workloads) {
        for (const auto& [architecture, order] : workload.preference) {
            if (architecture != "cpu" && architecture != "default")
                FUZZ_CHECK(architecture_or_family(set, architecture));
            for (const auto& mechanism : order) FUZZ_CHECK(set.mechanisms.count(mechanism) == 1);
        }
        for (const auto& [mechanism, flags] : workload.arguments) FUZZ_CHECK(set.mechanisms.count(mechanism) == 1);
        for (const auto& dtype : workload.dtype_preference) FUZZ_CHECK(contains(dtypes, dtype));
        for (const auto& [dtype, flags] : workload.dtype_arguments) FUZZ_CHECK(contains(dtypes, dtype));
        for (const auto& [mechanism, needs] : workload.mechanism_requirements) {
            FUZZ_CHECK(set.mechanisms.count(mechanism) == 1);
            (void)set.mechanism_for(workload, mechanism);  // must not throw
        }
    }
}

// Loads `paths`; returns the error message, empty when they loaded.  Any
// exception but provision::Error escapes and is reported with the input.
inline std::string load(const std::vector<std::string>& paths, const std::string& path) {
    try {
        check_loaded(provision::load_recipes(paths), path);
        return {};
    } catch (const provision::Error& error) {
        FUZZ_CHECK(error.code() == provision::ExitCode::invalid_input);
        FUZZ_CHECK(std::string_view(error.what()).size() > 0);
        FUZZ_CHECK(printable_as_is(error.what()));
        return error.what();
    }
}

// Only names the built-in recipes define can mend the error.
inline bool builtins_could_help(const std::string& error) {
    for (const char* missing : {": unknown mechanism '", ": unknown check '", ": unknown architecture '",
                                ": unknown dtype '", "define no mechanism"})
        if (error.find(missing) != std::string::npos) return true;
    return false;
}

inline void one_input(std::string_view input) {
    static MemoryFile file("fuzz-recipe.toml");
    const std::string path = file.hold(input);
    // Merging over the built-in recipes costs far more than the input alone,
    // so it is done only where it can get further.
    if (builtins_could_help(load({path}, path))) load({std::string(PROVISION_SOURCE_DIR) + "/recipes", path}, path);
}

}  // namespace fuzz::recipe
