// PEP 440 versions: parsing, the canonical spelling and the ordering.
#pragma once

#include <compare>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace provision {

class Version {
public:
    // Accepts every spelling PEP 440 allows (case, 'v' prefix, alternative
    // pre/post labels, separators, surrounding white space); nullopt for
    // anything else.  Numbers may have any number of digits.
    static std::optional<Version> parse(std::string_view text);

    // The canonical spelling, as Python's `packaging` prints it:
    // "1.0-ALPHA.1" -> "1.0a1", "1.0-r" -> "1.0.post0", "v01.2" -> "1.2".
    const std::string& str() const { return text_; }

    bool is_prerelease() const { return pre_label_ != PreLabel::none || dev_.has_value(); }
    bool is_postrelease() const { return post_.has_value(); }
    bool has_local() const { return !local_.empty(); }
    const std::string& local() const { return local_; }  // canonical, without the '+'
    std::size_t release_size() const { return release_.size(); }

    // Epoch and release only: "1!2.0rc1.post3+x" -> "1!2.0".
    Version base() const;
    // Epoch and the first `count` release numbers: the prefix that `~=` and
    // `==X.*` compare with.
    Version release_prefix(std::size_t count) const;
    // True when the epochs are equal and this release, padded with zeros,
    // starts with `prefix`'s release ("1.2.post1" matches "1.2", "1.20" does not).
    bool matches_prefix(const Version& prefix) const;

    // PEP 440 order: epoch, release (trailing zeros ignored), then
    // dev < pre-releases (a < b < rc) < final < post.  The local part is
    // ignored, so 1.0+cu121 == 1.0.
    friend std::strong_ordering operator<=>(const Version& a, const Version& b);
    friend bool operator==(const Version& a, const Version& b) { return (a <=> b) == 0; }

private:
    // Numbers are kept as their decimal digits without leading zeros, so no
    // version overflows.
    using Number = std::string;
    enum class PreLabel { none, alpha, beta, rc };  // in PEP 440 order

    Version() = default;
    void render();
    friend class VersionParser;

    Number epoch_ = "0";
    std::vector<Number> release_;
    PreLabel pre_label_ = PreLabel::none;
    Number pre_number_;
    std::optional<Number> post_;
    std::optional<Number> dev_;
    std::string local_;
    std::string text_;
};

}  // namespace provision
