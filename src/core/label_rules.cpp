#include "core/label_rules.h"

#include <fmt/format.h>

#include "core/text.h"

namespace provision {
namespace {

constexpr std::size_t kMaxNameLength = 63;     // a label's name and its value
constexpr std::size_t kMaxPrefixLength = 253;  // a DNS subdomain

// One character for a message: 'c', or its byte where it is not printable ASCII.
std::string described(char c) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20 || byte >= 0x7F) return fmt::format("the byte 0x{:02x}", byte);
    return fmt::format("'{}'", c);
}

bool is_alphanumeric(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

// The shared rule of names and values: [A-Za-z0-9._-], alphanumeric at both ends.
std::optional<std::string> segment_problem(std::string_view text, const char* what) {
    if (text.size() > kMaxNameLength)
        return fmt::format("the {} is {} characters long (at most {})", what, text.size(), kMaxNameLength);
    for (const char c : text)
        if (!is_alphanumeric(c) && c != '.' && c != '_' && c != '-')
            return fmt::format("the {} holds {} (only letters, digits, '.', '_' and '-')", what, described(c));
    if (!is_alphanumeric(text.front()) || !is_alphanumeric(text.back()))
        return fmt::format("the {} must begin and end with a letter or digit", what);
    return std::nullopt;
}

// `domain` is `root` or one of its subdomains.
bool within(std::string_view domain, std::string_view root) {
    return domain == root || (domain.size() > root.size() && domain.ends_with(root) &&
                              domain[domain.size() - root.size() - 1] == '.');
}

}  // namespace

std::optional<std::string> label_prefix_problem(std::string_view prefix) {
    if (prefix.empty()) return "the prefix is empty";
    if (prefix.size() > kMaxPrefixLength)
        return fmt::format("the prefix is {} characters long (at most {})", prefix.size(), kMaxPrefixLength);
    std::size_t start = 0;
    while (start <= prefix.size()) {
        const std::size_t dot = std::min(prefix.find('.', start), prefix.size());
        const std::string_view part = prefix.substr(start, dot - start);
        if (part.empty()) return "the prefix has an empty part between dots";
        for (const char c : part)
            if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
                return fmt::format("the prefix holds {} (a DNS subdomain: lowercase letters, digits, '-' and '.')",
                                   described(c));
        if (part.front() == '-' || part.back() == '-')
            return "each part of the prefix must begin and end with a letter or digit";
        start = dot + 1;
    }
    const bool reserved = within(prefix, "kubernetes.io") || within(prefix, "k8s.io");
    const bool nfd_own = within(prefix, "feature.node.kubernetes.io") || within(prefix, "profile.node.kubernetes.io");
    if (reserved && !nfd_own)
        return fmt::format("'{}' is in a namespace Kubernetes keeps for itself (kubernetes.io, k8s.io)", prefix);
    return std::nullopt;
}

std::optional<std::string> label_name_problem(std::string_view name) {
    if (name.empty()) return "the name is empty";
    return segment_problem(name, "name");
}

std::optional<std::string> label_key_problem(std::string_view key) {
    const auto slash = key.find('/');
    if (slash == std::string_view::npos) return label_name_problem(key);
    if (auto problem = label_prefix_problem(key.substr(0, slash))) return problem;
    return label_name_problem(key.substr(slash + 1));
}

std::optional<std::string> label_value_problem(std::string_view value) {
    if (value.empty()) return std::nullopt;
    return segment_problem(value, "value");
}

std::string gpu_product_value(std::string_view gpu_name) {
    std::string value = trimmed(gpu_name);
    for (char& c : value)
        if (c == ' ' || c == '\t') c = '-';
    return value;
}

}  // namespace provision
