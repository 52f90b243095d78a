#include "packages/version.h"

#include <algorithm>
#include <array>

namespace provision {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_lower_alnum(char c) { return is_digit(c) || (c >= 'a' && c <= 'z'); }
bool is_separator(char c) { return c == '-' || c == '_' || c == '.'; }
bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::string strip_leading_zeros(std::string_view digits) {
    const auto first = digits.find_first_not_of('0');
    return first == std::string_view::npos ? std::string("0") : std::string(digits.substr(first));
}

// Both numbers are canonical digit strings: a longer one is larger.
std::strong_ordering compare_numbers(const std::string& a, const std::string& b) {
    if (a.size() != b.size()) return a.size() <=> b.size();
    const int c = a.compare(b);
    return c < 0 ? std::strong_ordering::less : c > 0 ? std::strong_ordering::greater : std::strong_ordering::equal;
}

const std::string kZero = "0";

}  // namespace

// A hand-written matcher of the regular expression in PEP 440's appendix
// (the one `packaging` uses).  Every optional part may be taken greedily:
// none of the parts that can follow begins with what a part leaves behind,
// so the greedy match accepts exactly what the expression accepts.
class VersionParser {
public:
    explicit VersionParser(std::string_view text) {
        while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
        while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
        text_.reserve(text.size());
        for (char c : text) text_ += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
    }

    std::optional<Version> parse() {
        Version v;
        if (peek() == 'v') ++pos_;
        auto first = digits();
        if (!first) return std::nullopt;
        if (peek() == '!') {
            ++pos_;
            v.epoch_ = strip_leading_zeros(*first);
            first = digits();
            if (!first) return std::nullopt;
        }
        v.release_.push_back(strip_leading_zeros(*first));
        while (peek() == '.' && is_digit(peek(1))) {
            ++pos_;
            v.release_.push_back(strip_leading_zeros(*digits()));
        }
        parse_pre(v);
        parse_post(v);
        parse_dev(v);
        if (peek() == '+' && !parse_local(v)) return std::nullopt;
        if (pos_ != text_.size()) return std::nullopt;
        v.render();
        return v;
    }

private:
    char peek(std::size_t ahead = 0) const {
        return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
    }
    void skip_separator() {
        if (is_separator(peek())) ++pos_;
    }
    std::optional<std::string_view> digits() {
        const std::size_t start = pos_;
        while (is_digit(peek())) ++pos_;
        if (pos_ == start) return std::nullopt;
        return std::string_view(text_).substr(start, pos_ - start);
    }
    // Consumes the first of `labels` found here; returns its index.
    template <std::size_t N>
    std::optional<std::size_t> label(const std::array<std::string_view, N>& labels) {
        const std::string_view rest = std::string_view(text_).substr(pos_);
        for (std::size_t i = 0; i < N; ++i) {
            if (rest.starts_with(labels[i])) {
                pos_ += labels[i].size();
                return i;
            }
        }
        return std::nullopt;
    }
    std::string optional_number() {
        skip_separator();
        const auto n = digits();
        return n ? strip_leading_zeros(*n) : std::string("0");
    }

    void parse_pre(Version& v) {
        // Longer labels first, as in the expression: "alpha" before "a".
        static constexpr std::array<std::string_view, 8> labels = {"alpha", "a", "beta", "b",
                                                                   "preview", "pre", "c", "rc"};
        static constexpr std::array<Version::PreLabel, 8> kinds = {
            Version::PreLabel::alpha, Version::PreLabel::alpha, Version::PreLabel::beta, Version::PreLabel::beta,
            Version::PreLabel::rc,    Version::PreLabel::rc,    Version::PreLabel::rc,   Version::PreLabel::rc};
        const std::size_t start = pos_;
        skip_separator();
        const auto which = label(labels);
        if (!which) {
            pos_ = start;
            return;
        }
        v.pre_label_ = kinds[*which];
        v.pre_number_ = optional_number();
    }

    void parse_post(Version& v) {
        if (peek() == '-' && is_digit(peek(1))) {  // the implicit form: "1.0-1"
            ++pos_;
            v.post_ = strip_leading_zeros(*digits());
            return;
        }
        static constexpr std::array<std::string_view, 3> labels = {"post", "rev", "r"};
        const std::size_t start = pos_;
        skip_separator();
        if (!label(labels)) {
            pos_ = start;
            return;
        }
        v.post_ = optional_number();
    }

    void parse_dev(Version& v) {
        static constexpr std::array<std::string_view, 1> labels = {"dev"};
        const std::size_t start = pos_;
        skip_separator();
        if (!label(labels)) {
            pos_ = start;
            return;
        }
        v.dev_ = optional_number();
    }

    // "+" then alphanumeric segments joined by '-', '_' or '.'; written with
    // '.' and numeric segments without leading zeros, as `packaging` does.
    bool parse_local(Version& v) {
        ++pos_;
        std::string local;
        while (true) {
            const std::size_t start = pos_;
            bool numeric = true;
            for (; is_lower_alnum(peek()); ++pos_) numeric = numeric && is_digit(peek());
            if (pos_ == start) return false;
            const std::string_view segment = std::string_view(text_).substr(start, pos_ - start);
            if (!local.empty()) local += '.';
            local += numeric ? strip_leading_zeros(segment) : std::string(segment);
            if (!is_separator(peek())) break;
            ++pos_;
        }
        v.local_ = std::move(local);
        return true;
    }

    std::string text_;
    std::size_t pos_ = 0;
};

std::optional<Version> Version::parse(std::string_view text) { return VersionParser(text).parse(); }

void Version::render() {
    text_.clear();
    if (epoch_ != "0") text_ += epoch_ + "!";
    for (std::size_t i = 0; i < release_.size(); ++i) {
        if (i) text_ += '.';
        text_ += release_[i];
    }
    switch (pre_label_) {
        case PreLabel::none: break;
        case PreLabel::alpha: text_ += "a" + pre_number_; break;
        case PreLabel::beta: text_ += "b" + pre_number_; break;
        case PreLabel::rc: text_ += "rc" + pre_number_; break;
    }
    if (post_) text_ += ".post" + *post_;
    if (dev_) text_ += ".dev" + *dev_;
    if (!local_.empty()) text_ += "+" + local_;
}

Version Version::base() const { return release_prefix(release_.size()); }

Version Version::release_prefix(std::size_t count) const {
    Version prefix;
    prefix.epoch_ = epoch_;
    const auto kept = static_cast<std::ptrdiff_t>(std::min(count, release_.size()));
    prefix.release_.assign(release_.begin(), release_.begin() + kept);
    if (prefix.release_.empty()) prefix.release_.push_back(kZero);
    prefix.render();
    return prefix;
}

bool Version::matches_prefix(const Version& prefix) const {
    if (epoch_ != prefix.epoch_) return false;
    for (std::size_t i = 0; i < prefix.release_.size(); ++i) {
        const std::string& mine = i < release_.size() ? release_[i] : kZero;
        if (mine != prefix.release_[i]) return false;
    }
    return true;
}

std::strong_ordering operator<=>(const Version& a, const Version& b) {
    if (auto c = compare_numbers(a.epoch_, b.epoch_); c != 0) return c;
    const std::size_t n = std::max(a.release_.size(), b.release_.size());
    for (std::size_t i = 0; i < n; ++i) {
        const std::string& x = i < a.release_.size() ? a.release_[i] : kZero;
        const std::string& y = i < b.release_.size() ? b.release_[i] : kZero;
        if (auto c = compare_numbers(x, y); c != 0) return c;
    }
    // Where the pre-release part sorts: a bare dev release (1.0.dev1) before
    // every pre-release of the same release, a final release after them.
    auto pre_rank = [](const Version& v) {
        if (v.pre_label_ != Version::PreLabel::none) return 1;
        return (!v.post_ && v.dev_) ? 0 : 2;
    };
    if (auto c = pre_rank(a) <=> pre_rank(b); c != 0) return c;
    if (auto c = a.pre_label_ <=> b.pre_label_; c != 0) return c;
    if (a.pre_label_ != Version::PreLabel::none)
        if (auto c = compare_numbers(a.pre_number_, b.pre_number_); c != 0) return c;
    // No post release sorts before any post release.
    if (auto c = a.post_.has_value() <=> b.post_.has_value(); c != 0) return c;
    if (a.post_)
        if (auto c = compare_numbers(*a.post_, *b.post_); c != 0) return c;
    // No dev release sorts after any dev release.
    if (auto c = b.dev_.has_value() <=> a.dev_.has_value(); c != 0) return c;
    if (a.dev_)
        if (auto c = compare_numbers(*a.dev_, *b.dev_); c != 0) return c;
    return std::strong_ordering::equal;
}

}  // namespace provision
