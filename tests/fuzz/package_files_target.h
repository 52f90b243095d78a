// Fuzz target: the readers of files a package or an environment holds
// beside its code: RECORD's rows (and the Python they were built for),
// WHEEL tags, pyvenv.cfg, pyenv's version files, "#!" lines, xFormers'
// cpp_lib.json, and the names the extension checks classify (torch's
// namespaces in mangled symbols, CUDA compat folders, the version in a
// cuDNN library's file name).  Checks that a
// RECORD path never spans a row, that every row gives one path, that a
// version file gives words without blanks or comments, and that the
// classifiers agree with what they promise.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "native/cuda_compat.h"
#include "native/cudnn_files.h"
#include "native/torch_build.h"
#include "native/torch_symbols.h"
#include "packages/installed_files.h"
#include "python/pyenv_shim.h"
#include "python/python_build.h"
#include "python/pyvenv_config.h"
#include "python/shebang.h"

namespace fuzz::package_files {

inline void one_input(std::string_view text) {
    const auto paths = provision::parse_record(text);
    std::size_t rows = 0;
    for (std::size_t start = 0; start < text.size();) {
        std::size_t end = text.find('\n', start);
        if (end == std::string_view::npos) end = text.size();
        std::string_view row = text.substr(start, end - start);
        if (!row.empty() && row.back() == '\r') row.remove_suffix(1);
        if (!row.empty()) ++rows;
        start = end + 1;
    }
    FUZZ_CHECK(paths.size() == rows);
    std::size_t path_bytes = 0;
    for (const auto& path : paths) {
        FUZZ_CHECK(path.find('\n') == std::string::npos);
        path_bytes += path.size();
    }
    FUZZ_CHECK(path_bytes <= text.size());  // each byte handed out at most once

    if (const auto build = provision::python_build_from_record(text)) {
        FUZZ_CHECK(build->versions.size() == 1);
        FUZZ_CHECK(build->evidence.starts_with("RECORD lists "));
        FUZZ_CHECK(build->evidence.ends_with(".so"));
    }
    if (const auto build = provision::python_build_from_wheel(text))
        FUZZ_CHECK(!build->versions.empty() || build->stable_abi.has_value());
    (void)provision::parse_pyvenv_config(text);
    for (const auto& version : provision::read_pyenv_version_file(text)) {
        FUZZ_CHECK(!version.empty());
        FUZZ_CHECK(!version.starts_with('#'));
        FUZZ_CHECK(version.find_first_of(" \t\r\n") == std::string::npos);
    }
    if (const auto shebang = provision::parse_shebang(text)) FUZZ_CHECK(!shebang->program.empty());

    // Valid or not, the JSON reader answers without throwing.
    (void)provision::native::parse_xformers_cpp_lib(text);

    const std::string line(text.substr(0, text.find('\n')));
    if (provision::native::in_torch_namespace(line)) {
        FUZZ_CHECK(line.starts_with("_Z"));
        FUZZ_CHECK(line.find("3c10") != std::string::npos || line.find("2at") != std::string::npos ||
                   line.find("5torch") != std::string::npos);
    }
    if (const auto version = provision::native::cudnn_version_in_name(line)) {
        FUZZ_CHECK(line.starts_with("libcudnn"));
        FUZZ_CHECK(line.ends_with(*version));
        // MAJOR.MINOR.PATCH of digits, or nothing (the major version alone).
        FUZZ_CHECK(version->empty() || std::count(version->begin(), version->end(), '.') == 2);
        FUZZ_CHECK(version->find_first_not_of("0123456789.") == std::string::npos);
    }
    if (provision::native::is_cuda_compat_folder(line)) {
        FUZZ_CHECK(line.find("compat") != std::string::npos);
        FUZZ_CHECK(line.find("cuda") != std::string::npos);
    }
}

}  // namespace fuzz::package_files
