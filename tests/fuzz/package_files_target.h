// Fuzz target: the readers of files a package installs beside its code:
// RECORD's rows, xFormers' cpp_lib.json, and the names the extension checks
// classify (torch's namespaces in mangled symbols, CUDA compat folders).
// Checks that a RECORD path never spans a row, that every row gives one
// path, and that the classifiers agree with what they promise.
#pragma once

#include <string>
#include <string_view>

#include "fuzz/fuzz_support.h"
#include "native/cuda_compat.h"
#include "native/torch_build.h"
#include "native/torch_symbols.h"
#include "packages/installed_files.h"

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
    for (const auto& path : paths) FUZZ_CHECK(path.find('\n') == std::string::npos);

    // Valid or not, the JSON reader answers without throwing.
    (void)provision::native::parse_xformers_cpp_lib(text);

    const std::string line(text.substr(0, text.find('\n')));
    if (provision::native::in_torch_namespace(line)) {
        FUZZ_CHECK(line.starts_with("_Z"));
        FUZZ_CHECK(line.find("3c10") != std::string::npos || line.find("2at") != std::string::npos ||
                   line.find("5torch") != std::string::npos);
    }
    if (provision::native::is_cuda_compat_folder(line)) {
        FUZZ_CHECK(line.find("compat") != std::string::npos);
        FUZZ_CHECK(line.find("cuda") != std::string::npos);
    }
}

}  // namespace fuzz::package_files
