#include "native/cudnn_files.h"

#include <algorithm>

#include "native/loader_folders.h"

namespace provision::native {

namespace {

constexpr std::size_t kMostDigits = 6;

bool all_digits(std::string_view part) {
    return !part.empty() && part.size() <= kMostDigits &&
           std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::optional<std::string> cudnn_version_in_name(std::string_view name) {
    std::string_view rest;
    for (const std::string_view stem : {"libcudnn.so.", "libcudnn_graph.so."})
        if (name.starts_with(stem)) rest = name.substr(stem.size());
    if (rest.empty()) return std::nullopt;
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (parts.size() <= 3) {
        const std::size_t dot = rest.find('.', start);
        parts.push_back(rest.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
        if (dot == std::string_view::npos) break;
        start = dot + 1;
    }
    if (parts.size() > 3 || !std::all_of(parts.begin(), parts.end(), all_digits)) return std::nullopt;
    if (parts.size() == 1) return std::string();  // libcudnn.so.9: the major version alone
    if (parts.size() == 2) return std::nullopt;   // libcudnn.so.9.1: no such name is installed
    return std::string(rest);
}

std::optional<CudnnFile> find_cudnn_file(const std::vector<std::string>& folders) {
    for (const auto& folder : folders) {
        std::optional<CudnnFile> found;
        for (const auto& name : sorted_entries(folder, "libcudnn")) {
            const auto version = cudnn_version_in_name(name);
            if (!version) continue;
            if (!found || (found->version.empty() && !version->empty()))
                found = CudnnFile{folder + "/" + name, *version};
        }
        if (found) return found;
    }
    return std::nullopt;
}

}  // namespace provision::native
