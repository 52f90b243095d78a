// Fuzz target: PEP 440 versions, requirement specifiers and PEP 503 names.
// The input is up to four lines: versions A, B and C, then a requirement.
// Beyond "no crash, no sanitizer report" it checks that the canonical
// spelling round-trips and that the order is a total order.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "fuzz/fuzz_support.h"
#include "packages/python_packages.h"

namespace fuzz::version {

using provision::PreReleases;
using provision::Requirement;
using provision::Version;

inline std::vector<std::string_view> split_lines(std::string_view text, std::size_t max_lines) {
    std::vector<std::string_view> lines;
    while (lines.size() + 1 < max_lines) {
        const std::size_t end = text.find('\n');
        if (end == std::string_view::npos) break;
        lines.push_back(text.substr(0, end));
        text.remove_prefix(end + 1);
    }
    lines.push_back(text);
    return lines;
}

inline void check_round_trip(const Version& v) {
    const auto again = Version::parse(v.str());
    FUZZ_CHECK(again.has_value());
    FUZZ_CHECK(*again == v);
    FUZZ_CHECK(again->str() == v.str());
    FUZZ_CHECK(again->local() == v.local());
    FUZZ_CHECK((v <=> v) == 0);
    FUZZ_CHECK(v.base() == v.base().base());
    FUZZ_CHECK(v.base().str() == v.release_prefix(v.release_size()).str());
    FUZZ_CHECK(v.matches_prefix(v.base()));
    if (!v.is_prerelease() && !v.is_postrelease()) FUZZ_CHECK(v == v.base());
    if (v.is_postrelease() && !v.is_prerelease()) FUZZ_CHECK(v > v.base());
}

inline void check_pair(const Version& a, const Version& b) {
    const auto ab = a <=> b;
    const auto ba = b <=> a;
    FUZZ_CHECK((ab < 0) == (ba > 0));  // antisymmetry
    FUZZ_CHECK((ab == 0) == (ba == 0));
    FUZZ_CHECK((a == b) == (ab == 0));
    if (a == b) FUZZ_CHECK(a.base() == b.base());
}

inline void check_triple(const Version& a, const Version& b, const Version& c) {
    if (a <= b && b <= c) FUZZ_CHECK(a <= c);  // transitivity
    if (a < b && b < c) FUZZ_CHECK(a < c);
    if (a == b && b == c) FUZZ_CHECK(a == c);
}

inline void check_requirement(std::string_view text, const std::vector<Version>& versions) {
    Requirement requirement;
    try {
        requirement = Requirement::parse(text);
    } catch (const std::invalid_argument&) {
        return;  // refused with a message: fine
    }
    FUZZ_CHECK(provision::is_valid_package_name(requirement.name));
    FUZZ_CHECK(provision::normalize_package_name(requirement.name) == requirement.name);
    const Requirement again = Requirement::parse(requirement.str());  // must not throw
    FUZZ_CHECK(again.str() == requirement.str());
    for (const Version& v : versions) {
        const bool allowed = requirement.allows(v);
        FUZZ_CHECK(again.allows(v) == allowed);
        // The install-time rule only ever takes away.
        if (requirement.allows(v, PreReleases::only_when_named)) FUZZ_CHECK(allowed);
        for (const Version& w : versions)
            if (v == w && v.local() == w.local()) FUZZ_CHECK(requirement.allows(w) == allowed);
    }
}

inline void one_input(std::string_view input) {
    const auto lines = split_lines(input, 4);

    std::vector<Version> versions;
    for (std::size_t i = 0; i < lines.size() && i < 3; ++i) {
        const std::string name = provision::normalize_package_name(lines[i]);
        FUZZ_CHECK(provision::normalize_package_name(name) == name);
        if (auto v = Version::parse(lines[i])) {
            check_round_trip(*v);
            versions.push_back(*v);
        }
    }
    for (const Version& a : versions)
        for (const Version& b : versions) check_pair(a, b);
    if (versions.size() == 3) {
        const Version& a = versions[0];
        const Version& b = versions[1];
        const Version& c = versions[2];
        for (const auto& [x, y, z] : {std::tuple{&a, &b, &c}, std::tuple{&a, &c, &b}, std::tuple{&b, &a, &c},
                                      std::tuple{&b, &c, &a}, std::tuple{&c, &a, &b}, std::tuple{&c, &b, &a}})
            check_triple(*x, *y, *z);
    }
    check_requirement(lines.size() == 4 ? lines[3] : input, versions);
}

}  // namespace fuzz::version
