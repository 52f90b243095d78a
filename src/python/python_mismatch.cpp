#include "python/python_mismatch.h"

#include <set>

#include <fmt/format.h>

#include "packages/package_name.h"

namespace provision {

std::string PythonMismatch::describe() const {
    return fmt::format("{} {} is built for {}; the workload's Python is {}", package.name, package.version,
                       build.describe(), python.str());
}

std::vector<PythonMismatch> find_python_mismatches(const PackageIndex& packages, const std::vector<std::string>& names,
                                                   PythonVersion python) {
    std::vector<PythonMismatch> mismatches;
    std::set<std::string> seen;
    for (const auto& name : names) {
        if (!seen.insert(normalize_package_name(name)).second) continue;
        const InstalledPackage* installed = packages.find(name);
        if (!installed) continue;
        const auto build = read_python_build(installed->location);
        if (build && !build->imports_on(python)) mismatches.push_back({*installed, *build, python});
    }
    return mismatches;
}

}  // namespace provision
