#include "packages/requirement.h"

#include <array>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/text.h"
#include "packages/package_name.h"

namespace provision {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t'; }
bool is_name_char(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '_' ||
           c == '.';
}
// PEP 508's version characters, '*' for prefix matches included.
bool is_version_char(char c) { return is_name_char(c) || c == '*' || c == '+' || c == '!'; }

class RequirementParser {
public:
    explicit RequirementParser(std::string_view text) : text_(text) {}

    Requirement parse() {
        Requirement requirement;
        skip_spaces();
        const std::string_view name = take_while(is_name_char);
        if (name.empty()) fail("expected a package name");
        if (!is_valid_package_name(name))
            fail(fmt::format("'{}' is not a valid package name (letters, digits, and '-', '_' or '.' between them)",
                             echoed(name)));
        requirement.name = normalize_package_name(name);
        skip_spaces();
        if (peek() == '[') parse_extras(requirement);
        skip_spaces();
        if (peek() == '(') {
            ++pos_;
            parse_specifiers(requirement, ')');
            if (peek() != ')') fail("expected ')' after the version specifiers");
            ++pos_;
        } else {
            parse_specifiers(requirement, '\0');
        }
        skip_spaces();
        if (peek() == ';') fail("environment markers (';') are not supported");
        if (peek() == '@') fail("URL requirements ('@') are not supported");
        if (pos_ != text_.size()) fail(fmt::format("unexpected '{}'", echoed(text_.substr(pos_))));
        return requirement;
    }

private:
    [[noreturn]] void fail(const std::string& reason) const {
        // Every part of `reason` that echoes the text is printable() already.
        throw std::invalid_argument(
            fmt::format("invalid requirement '{}': {}", echoed(text_), reason));
    }
    char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
    void skip_spaces() {
        while (is_space(peek())) ++pos_;
    }
    template <typename Predicate>
    std::string_view take_while(Predicate predicate) {
        const std::size_t start = pos_;
        while (pos_ < text_.size() && predicate(text_[pos_])) ++pos_;
        return text_.substr(start, pos_ - start);
    }

    void parse_extras(Requirement& requirement) {
        ++pos_;  // '['
        skip_spaces();
        if (peek() == ']') {
            ++pos_;
            return;
        }
        while (true) {
            skip_spaces();
            const std::string_view extra = take_while(is_name_char);
            if (!is_valid_package_name(extra)) fail("expected an extra's name inside '[...]'");
            requirement.extras.push_back(normalize_package_name(extra));
            skip_spaces();
            if (peek() == ']') break;
            if (peek() != ',') fail("expected ',' or ']' in the extras");
            ++pos_;
        }
        ++pos_;
    }

    void parse_specifiers(Requirement& requirement, char closing) {
        skip_spaces();
        if (peek() == closing || peek() == ';' || peek() == '@' || pos_ == text_.size()) return;
        while (true) {
            skip_spaces();
            requirement.specifiers.push_back(parse_specifier());
            skip_spaces();
            if (peek() != ',') return;
            ++pos_;
        }
    }

    std::pair<std::string, Version> parse_specifier() {
        // Longer operators first, so "==" is not read as "=" and "===" not as "==".
        static constexpr std::array<std::string_view, 8> operators = {"===", "~=", "==", "!=", "<=", ">=", "<", ">"};
        std::string op;
        for (std::string_view candidate : operators) {
            if (text_.substr(pos_).starts_with(candidate)) {
                op = candidate;
                pos_ += candidate.size();
                break;
            }
        }
        if (op.empty()) {
            if (pos_ == text_.size()) fail("expected a version specifier after ','");
            fail(fmt::format("expected a version operator (==, !=, <=, >=, <, >, ~=) at '{}'",
                             echoed(text_.substr(pos_))));
        }
        if (op == "===") fail("arbitrary equality ('===') is not supported");
        skip_spaces();
        std::string_view version_text = take_while(is_version_char);
        if (version_text.empty()) fail(fmt::format("expected a version after '{}'", op));
        const bool wildcard = version_text.ends_with(".*");
        if (wildcard) {
            if (op != "==" && op != "!=") fail(fmt::format("'.*' is only allowed after '==' or '!=', not '{}'", op));
            version_text.remove_suffix(2);
        }
        const auto version = Version::parse(version_text);
        if (!version) fail(fmt::format("'{}' is not a PEP 440 version", echoed(version_text)));
        if (wildcard) {
            if (version->str() != version->base().str())
                fail(fmt::format("'{}.*' may hold only an epoch and release numbers",
                                 echoed(version_text)));
            op += '*';
        } else if (version->has_local() && op != "==" && op != "!=") {
            fail(fmt::format("a local version ('+{}') is only allowed after '==' or '!='",
                             echoed(version->local())));
        }
        if (op == "~=" && version->release_size() < 2)
            fail(fmt::format("'~={}' needs at least two release numbers (for example ~={}.0)",
                             echoed(version_text), echoed(version_text)));
        return {op, *version};
    }

    std::string_view text_;
    std::size_t pos_ = 0;
};

bool specifier_allows(const std::string& op, const Version& spec, const Version& v) {
    if (op == "==" || op == "!=") {
        // A local label in the specifier must match exactly (PEP 440); one in
        // the candidate alone is ignored.
        const bool equal = v == spec && (!spec.has_local() || v.local() == spec.local());
        return (op == "==") == equal;
    }
    if (op == "==*") return v.matches_prefix(spec);
    if (op == "!=*") return !v.matches_prefix(spec);
    if (op == ">=") return v >= spec;
    if (op == "<=") return v <= spec;
    if (op == "<") {
        // "<3.0" must not admit 3.0rc1, which sorts below 3.0.
        if (!spec.is_prerelease() && v.is_prerelease() && v.base() == spec.base()) return false;
        return v < spec;
    }
    if (op == ">") {
        // ">1.7" must not admit 1.7.post1 (or 1.7 with a local label).
        if (!spec.is_postrelease() && v.is_postrelease() && v.base() == spec.base()) return false;
        if (v.has_local() && v.base() == spec.base()) return false;
        return v > spec;
    }
    if (op == "~=") return v >= spec && v.matches_prefix(spec.release_prefix(spec.release_size() - 1));
    return false;  // parse() admits no other operator
}

}  // namespace

Requirement Requirement::parse(std::string_view text) { return RequirementParser(text).parse(); }

bool Requirement::names_prerelease() const {
    for (const auto& [op, version] : specifiers)
        if (op != "!=" && op != "!=*" && version.is_prerelease()) return true;
    return false;
}

bool Requirement::allows(const Version& version, PreReleases pre_releases) const {
    if (pre_releases == PreReleases::only_when_named && version.is_prerelease() && !names_prerelease()) return false;
    for (const auto& [op, spec] : specifiers)
        if (!specifier_allows(op, spec, version)) return false;
    return true;
}

std::string Requirement::str() const {
    std::string text = name;
    if (!extras.empty()) text += fmt::format("[{}]", fmt::join(extras, ","));
    for (std::size_t i = 0; i < specifiers.size(); ++i) {
        const auto& [op, version] = specifiers[i];
        if (i) text += ',';
        if (op.ends_with('*'))
            text += fmt::format("{}{}.*", op.substr(0, 2), version.str());
        else
            text += op + version.str();
    }
    return text;
}

}  // namespace provision
