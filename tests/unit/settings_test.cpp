// The one table of environment variables against what the sources read and
// what the README documents.
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include <catch2/catch.hpp>

#include "app/environment_variables.h"
#include "test_support.h"

using namespace provision;

namespace {

std::string contents(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

std::set<std::string> table_names() {
    std::set<std::string> names;
    for (const auto& variable : environment_variables()) names.emplace(variable.name);
    return names;
}

// PROVISION_ names in `text` matching `pattern`'s first group; test hooks
// (PROVISION_TEST_*) are not the product's.
std::set<std::string> provision_names(const std::string& text, const std::regex& pattern) {
    std::set<std::string> names;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), pattern); it != std::sregex_iterator(); ++it) {
        const std::string name = (*it)[1];
        if (name.rfind("PROVISION_TEST_", 0) != 0) names.insert(name);
    }
    return names;
}

}  // namespace

TEST_CASE("every PROVISION_ variable the sources read is in the table") {
    const std::regex quoted("\"(PROVISION_[A-Z_]+)\"");
    std::set<std::string> read;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(test_support::source_path("src")))
        if (entry.path().extension() == ".cpp" || entry.path().extension() == ".h")
            for (const auto& name : provision_names(contents(entry.path()), quoted)) read.insert(name);
    REQUIRE(read.size() > 10);
    const auto table = table_names();
    for (const auto& name : read) {
        INFO(name);
        CHECK(table.count(name) == 1);
    }
}

// The "env variable" column of the README's option tables (the rows after a
// "| option | env variable | meaning |" header, up to the table's end).
std::string readme_variable_column(const std::string& readme) {
    std::string column;
    bool in_table = false;
    std::istringstream lines(readme);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("| option | env variable |", 0) == 0) {
            in_table = true;
            continue;
        }
        if (line.rfind("|", 0) != 0) {
            in_table = false;
            continue;
        }
        if (!in_table) continue;
        // A cell may hold an escaped pipe (`quick\|full` in Markdown): not a cell boundary.
        const auto boundary = [&](std::size_t from) {
            auto at = line.find('|', from);
            while (at != std::string::npos && at > 0 && line[at - 1] == '\\') at = line.find('|', at + 1);
            return at;
        };
        const auto first = boundary(1);
        const auto second = first == std::string::npos ? first : boundary(first + 1);
        if (first != std::string::npos && second != std::string::npos)
            column += line.substr(first + 1, second - first - 1) + "\n";
    }
    return column;
}

TEST_CASE("the README documents every variable of the table, and its option tables no other") {
    const std::string readme = contents(test_support::source_path("README.md"));
    for (const auto& variable : environment_variables()) {
        INFO(variable.name);
        CHECK(readme.find(std::string(variable.name)) != std::string::npos);
    }
    const std::string column = readme_variable_column(readme);
    const auto documented = provision_names(column, std::regex("(PROVISION_[A-Z_]+)"));
    REQUIRE(documented.size() > 10);
    const auto table = table_names();
    for (const auto& name : documented) {
        INFO(name);
        CHECK(table.count(name) == 1);
    }
    // And every PROVISION_ variable of the table has its row there.
    for (const auto& name : table) {
        if (name.rfind("PROVISION_", 0) != 0) continue;
        INFO(name);
        CHECK(documented.count(name) == 1);
    }
}

TEST_CASE("--help's list names every variable once") {
    const std::string help = environment_help();
    for (const auto& variable : environment_variables()) {
        INFO(variable.name);
        const std::string line = "  " + std::string(variable.name) + " ";
        CHECK(help.find(line) != std::string::npos);
        CHECK(help.find(line, help.find(line) + 1) == std::string::npos);
    }
}
