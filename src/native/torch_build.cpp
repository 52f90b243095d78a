#include "native/torch_build.h"

#include <cctype>
#include <map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "native/byte_source.h"

namespace provision::native {

namespace {

std::string_view trim(std::string_view text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
    return text;
}

// One line `name[: annotation] = value` where value is a quoted string
// (nullopt inside: None); false when the line is no such assignment.
bool parse_assignment(std::string_view line, std::string& name, std::optional<std::string>& value) {
    line = trim(line);
    std::size_t i = 0;
    while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_')) ++i;
    if (i == 0) return false;
    name.assign(line.substr(0, i));
    const std::size_t equals = line.find('=', i);
    if (equals == std::string_view::npos) return false;
    const std::string_view between = trim(line.substr(i, equals - i));
    if (!between.empty() && between.front() != ':') return false;  // `a.b = ...`, `a == b`
    if (equals + 1 < line.size() && line[equals + 1] == '=') return false;
    std::string_view rest = trim(line.substr(equals + 1));
    if (rest == "None") {
        value.reset();
        return true;
    }
    if (rest.size() < 2 || (rest.front() != '\'' && rest.front() != '"')) return false;
    const std::size_t close = rest.find(rest.front(), 1);
    if (close == std::string_view::npos) return false;
    value.emplace(rest.substr(1, close - 1));
    return true;
}

std::optional<std::string> cuda_version_of(const nlohmann::json& number) {
    if (!number.is_number_integer()) return std::nullopt;
    const long long n = number.get<long long>();
    if (n <= 0) return std::nullopt;
    // 1208 (torch.version.cuda without the dot) or 12080 (CUDA_VERSION).
    if (n >= 10000) return fmt::format("{}.{}", n / 1000, (n % 1000) / 10);
    return fmt::format("{}.{}", n / 100, n % 100);
}

std::optional<std::string> string_member(const nlohmann::json& object, const char* key) {
    const auto found = object.find(key);
    if (found == object.end() || !found->is_string()) return std::nullopt;
    return found->get<std::string>();
}

}  // namespace

std::string_view to_string(TorchBackend backend) {
    switch (backend) {
        case TorchBackend::cuda: return "cuda";
        case TorchBackend::rocm: return "rocm";
        case TorchBackend::cpu: return "cpu";
    }
    return "cpu";
}

std::optional<TorchBuild> parse_torch_version_py(std::string_view text) {
    std::map<std::string, std::optional<std::string>> assigned;  // the first assignment of each name
    while (!text.empty()) {
        const std::size_t end = text.find('\n');
        const std::string_view line = text.substr(0, end);
        text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
        std::string name;
        std::optional<std::string> value;
        if (parse_assignment(line, name, value)) assigned.emplace(name, value);
    }
    const auto version = assigned.find("__version__");
    if (version == assigned.end() || !version->second || version->second->empty()) return std::nullopt;
    TorchBuild build;
    build.version = *version->second;
    if (const auto cuda = assigned.find("cuda"); cuda != assigned.end() && cuda->second && !cuda->second->empty())
        build.cuda = cuda->second;
    if (const auto hip = assigned.find("hip"); hip != assigned.end() && hip->second && !hip->second->empty())
        build.hip = hip->second;
    build.backend = build.hip ? TorchBackend::rocm : build.cuda ? TorchBackend::cuda : TorchBackend::cpu;
    return build;
}

std::optional<XformersBuild> parse_xformers_cpp_lib(std::string_view json) {
    const nlohmann::json document = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
    if (!document.is_object()) return std::nullopt;
    const auto version = document.find("version");
    if (version == document.end() || !version->is_object()) return std::nullopt;
    XformersBuild build;
    build.torch = string_member(*version, "torch");
    if (const auto cuda = version->find("cuda"); cuda != version->end()) build.cuda = cuda_version_of(*cuda);
    build.python = string_member(*version, "python");
    return build;
}

ReadResult<std::string> read_small_file(const std::string& path, std::size_t max_bytes) {
    auto source = FileSource::open(path);
    if (!source) return source.error();
    const auto& file = *source.value();
    if (file.size() > max_bytes)
        return ReadError{ReadErrorKind::malformed, fmt::format("{}: larger than {} bytes", path, max_bytes)};
    std::string text(file.size(), '\0');
    if (!file.read_at(0, text.data(), text.size()))
        return ReadError{ReadErrorKind::io_error, fmt::format("{}: cannot be read", path)};
    return text;
}

ReadResult<TorchBuild> read_torch_build(const std::string& version_py_path) {
    auto text = read_small_file(version_py_path);
    if (!text) return text.error();
    auto build = parse_torch_version_py(*text);
    if (!build) return ReadError{ReadErrorKind::malformed, fmt::format("{}: no __version__", version_py_path)};
    return *build;
}

ReadResult<XformersBuild> read_xformers_build(const std::string& cpp_lib_json_path) {
    auto text = read_small_file(cpp_lib_json_path);
    if (!text) return text.error();
    auto build = parse_xformers_cpp_lib(*text);
    if (!build)
        return ReadError{ReadErrorKind::malformed,
                         fmt::format("{}: not JSON with a \"version\" object", cpp_lib_json_path)};
    return *build;
}

}  // namespace provision::native
