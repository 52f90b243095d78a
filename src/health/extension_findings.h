// Whether an extension a candidate mechanism needs (flash-attn,
// sageattention, xformers, ...) can run here, judged from its modules'
// files (native/extension_files.h): device code for every visible GPU, the
// torch symbols it needs exported by the installed torch, and for xFormers
// the torch and CUDA it recorded at build time.  An extension that cannot
// run makes its package unusable, so the mechanisms needing it are rejected
// and selection falls back; a finding says why (levels: extension_unusable,
// torch_abi_mismatch, ptx_jit_only in the recipes' [policy]).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpu/inventory.h"
#include "health/findings.h"
#include "health/torch_findings.h"
#include "native/extension_files.h"
#include "native/torch_symbols.h"
#include "native/torch_build.h"
#include "packages/site_packages.h"
#include "recipe/recipe.h"

namespace provision {

struct ExtensionEvidence {
    InstalledPackage package;
    std::vector<std::string> mechanisms;  // the candidates that need it
    // Its modules, when RECORD could be read; `why_unverified` otherwise.
    std::optional<native::ExtensionFiles> files;
    std::string why_unverified;
    std::optional<native::XformersBuild> xformers;  // xformers/cpp_lib.json, when the package has one
};

struct ExtensionJudgement {
    NativePackageReport package;
    std::vector<Finding> findings;
    std::optional<std::string> unusable;  // why its mechanisms cannot use it
};

// `torch`: the installed torch's files (nullptr without one); `exports`: its
// torch/lib libraries (nullptr without torch).
ExtensionJudgement judge_extension(const ExtensionEvidence& evidence, const TorchFiles* torch,
                                   native::TorchExports* exports, const Inventory& inventory,
                                   const HealthPolicy& policy);

}  // namespace provision
