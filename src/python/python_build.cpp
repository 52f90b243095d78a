#include "python/python_build.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "core/text.h"
#include "packages/installed_files.h"
#include "python/file_probe.h"

namespace provision {
namespace {

constexpr std::size_t kWheelBytes = 64 * 1024;

// "310" -> 3.10, "39" -> 3.9, "313t" -> 3.13 (free-threaded builds are 3.13 too).
std::optional<PythonVersion> version_of_digits(std::string_view digits) {
    std::size_t count = 0;
    while (count < digits.size() && std::isdigit(static_cast<unsigned char>(digits[count]))) ++count;
    if (count < 2 || digits[0] != '3') return std::nullopt;
    return PythonVersion::parse(fmt::format("3.{}", digits.substr(1, count - 1)));
}

void add_unique(std::vector<PythonVersion>& versions, PythonVersion version) {
    if (std::find(versions.begin(), versions.end(), version) == versions.end()) versions.push_back(version);
}

std::vector<std::string_view> split(std::string_view text, char separator) {
    std::vector<std::string_view> parts;
    std::size_t at = 0;
    while (true) {
        const auto end = text.find(separator, at);
        parts.push_back(text.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at));
        if (end == std::string_view::npos) return parts;
        at = end + 1;
    }
}

}  // namespace

bool PythonBuild::imports_on(PythonVersion version) const {
    if (std::find(versions.begin(), versions.end(), version) != versions.end()) return true;
    if (stable_abi && *stable_abi <= version) return true;
    return versions.empty() && !stable_abi;
}

std::string PythonBuild::describe() const {
    std::vector<std::string> words;
    for (const auto& version : versions) words.push_back(version.str());
    if (stable_abi) words.push_back(fmt::format("{} or newer", stable_abi->str()));
    return fmt::format("Python {}", fmt::join(words, " or "));
}

std::optional<PythonBuild> python_build_from_wheel(std::string_view wheel) {
    PythonBuild build;
    for (const std::string_view line : split(wheel, '\n')) {
        const auto colon = line.find(':');
        if (colon == std::string_view::npos || lowercase(trimmed(line.substr(0, colon))) != "tag") continue;
        const std::string tag = trimmed(line.substr(colon + 1));
        const auto parts = split(tag, '-');  // python-abi-platform, each maybe "a.b" compressed
        if (parts.size() != 3) continue;
        for (const std::string_view python : split(parts[0], '.')) {
            if (!python.starts_with("cp")) continue;
            const auto version = version_of_digits(python.substr(2));
            if (!version) continue;
            for (const std::string_view abi : split(parts[1], '.')) {
                if (abi == "abi3") {
                    if (!build.stable_abi || *version < *build.stable_abi) build.stable_abi = version;
                } else if (abi.starts_with("cp")) {
                    add_unique(build.versions, *version);
                }
            }
        }
        if (build.evidence.empty() && (build.stable_abi || !build.versions.empty()))
            build.evidence = fmt::format("WHEEL tag {}", tag);
    }
    if (build.evidence.empty()) return std::nullopt;
    return build;
}

std::optional<PythonBuild> python_build_from_record(std::string_view record) {
    constexpr std::string_view kMarker = ".cpython-";
    std::optional<PythonBuild> found;
    // One pass over the rows; only a row's path (its first field) is looked at.
    for_each_record_path(record, [&](std::string_view path) {
        if (found || !path.ends_with(".so")) return;
        const std::string_view name = path.substr(path.rfind('/') + 1);
        const auto marker = name.find(kMarker);
        if (marker == std::string_view::npos) return;
        const auto version = version_of_digits(name.substr(marker + kMarker.size()));
        if (!version) return;
        found.emplace();
        found->versions.push_back(*version);
        found->evidence = fmt::format("RECORD lists {}", path);
    });
    return found;
}

std::optional<PythonBuild> read_python_build(const std::string& dist_info) {
    if (!std::string_view(dist_info).ends_with(".dist-info")) return std::nullopt;
    if (const auto wheel = file_probe::read_head(dist_info + "/WHEEL", kWheelBytes))
        if (auto build = python_build_from_wheel(*wheel)) return build;
    if (const auto record = file_probe::read_head(dist_info + "/RECORD", kMaxRecordBytes))
        return python_build_from_record(*record);
    return std::nullopt;
}

}  // namespace provision
