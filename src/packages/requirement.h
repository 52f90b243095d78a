// PEP 508 requirements reduced to what an installed-package check needs:
// a name, optional extras and PEP 440 version specifiers.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "packages/version.h"

namespace provision {

// Whether a pre-release (1.0rc1, 2.6.0.dev20250101) can satisfy a requirement.
enum class PreReleases {
    // PEP 440 accepts pre-releases that are "already present on the system",
    // and `pip check` does the same: right for installed packages.
    allowed,
    // The install-time rule: only when a specifier names a pre-release
    // (">=3.0b1"), as `packaging`'s SpecifierSet.contains() decides.
    only_when_named,
};

struct Requirement {
    std::string name;                 // normalised (PEP 503)
    std::vector<std::string> extras;  // normalised; kept for str(), not checked
    // (">=", 2.6.3), ("<", 3) ...; operators: == != >= <= > < ~=, and the
    // prefix matches "==2.1.*" / "!=2.1.*" stored as ("==*", 2.1) / ("!=*", 2.1).
    std::vector<std::pair<std::string, Version>> specifiers;

    // "flash-attn>=2.6.3,<3", "torch (>=2.0)", "xformers[triton]==0.0.32.*".
    // Throws std::invalid_argument naming the text and what is wrong with it;
    // environment markers (";") and URLs ("@") are refused, as is "===".
    static Requirement parse(std::string_view text);

    // Every specifier allows `version` (PEP 440 semantics: "<3" excludes
    // 3.0rc1, ">1.7" excludes 1.7.post1, "~=2.2" means ">=2.2,==2.*").
    bool allows(const Version& version, PreReleases pre_releases = PreReleases::allowed) const;
    // A specifier other than "!=" names a pre-release.
    bool names_prerelease() const;

    // The canonical spelling: "flash-attn>=2.6.3,<3".
    std::string str() const;
};

}  // namespace provision
