#include "python/pyvenv_config.h"

#include "core/text.h"

namespace provision {

PyvenvConfig parse_pyvenv_config(std::string_view text) {
    PyvenvConfig config;
    std::optional<PythonVersion> version, version_info;
    std::size_t at = 0;
    while (at < text.size()) {
        // site.py reads it in text mode: "\r", "\n" and "\r\n" all end a line.
        const auto end = text.find_first_of("\r\n", at);
        const std::string_view line =
            text.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
        at = end == std::string_view::npos ? text.size() : end + 1;
        const auto equals = line.find('=');
        if (equals == std::string_view::npos) continue;
        const std::string key = lowercase(trimmed(line.substr(0, equals)));
        const std::string value = trimmed(line.substr(equals + 1));
        if (key == "home") config.home = value;
        else if (key == "include-system-site-packages")
            config.include_system_site_packages = lowercase(value) == "true";
        else if (key == "version_info") version_info = PythonVersion::parse(value);
        else if (key == "version") version = PythonVersion::parse(value);
    }
    config.version = version_info ? version_info : version;
    return config;
}

}  // namespace provision
