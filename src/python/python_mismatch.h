// Installed distributions whose compiled extensions were built for another
// Python than the workload's: importing them fails, so the mechanisms that
// need them cannot serve (signal python_mismatch).
#pragma once

#include <string>
#include <vector>

#include "packages/site_packages.h"
#include "python/python_build.h"
#include "python/python_version.h"

namespace provision {

struct PythonMismatch {
    InstalledPackage package;
    PythonBuild build;
    PythonVersion python;  // the workload's

    // "flash_attn 2.7.4 is built for Python 3.10; the workload's Python is 3.12"
    std::string describe() const;
};

// Reads the build of each installed distribution in `names` (only these:
// a start must not read every RECORD in site-packages) and returns those
// `python` cannot import, in `names` order.
std::vector<PythonMismatch> find_python_mismatches(const PackageIndex& packages, const std::vector<std::string>& names,
                                                   PythonVersion python);

}  // namespace provision
