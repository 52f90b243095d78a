// The one table of settings: against what the sources read, against the
// README's option tables, and decoding (a flag wins, a bad value is refused).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

#include <catch2/catch.hpp>

#include "app/settings.h"
#include "core/error.h"
#include "core/text.h"
#include "kernels/fault_injection.h"
#include "test_support.h"

using namespace provision;

namespace {

std::string contents(const std::filesystem::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// The variables of the table a user sets (not a test build's hooks).
std::set<std::string> table_names() {
    std::set<std::string> names;
    for (const auto& setting : settings())
        if (!setting.variable.empty() && !setting.test_hook) names.emplace(setting.variable);
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

// Variables of others (NCCL's, pyenv's, the launcher's) that the sources
// read: each is a row of the table, marked with its owner.  NCCL_DEBUG and
// its companions are written for the workers' own NCCL log, never read.
TEST_CASE("every NCCL_, PYENV_ and launcher variable the sources read is in the table, with its owner") {
    const std::regex quoted("\"((NCCL|PYENV|SLURM|OMPI|PET|TORCHELASTIC)_[A-Z_]+|MASTER_PORT|LOCAL_RANK)\"");
    const std::set<std::string> written_only = {"NCCL_DEBUG", "NCCL_DEBUG_SUBSYS", "NCCL_DEBUG_FILE"};
    std::set<std::string> read;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(test_support::source_path("src"))) {
        if (entry.path().extension() != ".cpp" && entry.path().extension() != ".h") continue;
        if (entry.path().filename() == "settings.cpp") continue;  // the table itself
        const std::string text = contents(entry.path());
        for (auto it = std::sregex_iterator(text.begin(), text.end(), quoted); it != std::sregex_iterator(); ++it)
            if (written_only.count((*it)[1]) == 0) read.insert((*it)[1]);
    }
    REQUIRE(read.count("NCCL_SOCKET_IFNAME") == 1);
    REQUIRE(read.count("PYENV_VERSION") == 1);
    for (const auto& name : read) {
        INFO(name);
        const auto row = std::find_if(settings().begin(), settings().end(),
                                      [&](const Setting& setting) { return setting.variable == name; });
        REQUIRE(row != settings().end());
        CHECK_FALSE(row->owner.empty());
    }
}

TEST_CASE("a variable is provision's own (PROVISION_) or marked with its owner, never both") {
    for (const auto& setting : settings()) {
        if (setting.variable.empty()) continue;
        INFO(setting.variable);
        const bool own = setting.variable.starts_with("PROVISION_");
        CHECK(own == setting.owner.empty());
        if (!own) CHECK(setting.flag.empty());
    }
}

TEST_CASE("--help lists the variables of others apart, each with its owner") {
    const std::string help = environment_help();
    const auto others = help.find("Variables of others");
    REQUIRE(others != std::string::npos);
    for (const auto& setting : settings()) {
        if (setting.variable.empty() || setting.test_hook) continue;
        INFO(setting.variable);
        const auto at = help.find("  " + std::string(setting.variable) + " ");
        REQUIRE(at != std::string::npos);
        CHECK((at > others) == !setting.owner.empty());
        if (!setting.owner.empty())
            CHECK(help.find("[" + std::string(setting.owner) + "] " + std::string(setting.help), at) !=
                  std::string::npos);
    }
}

namespace {

// The body rows of every Markdown table in `text` whose header line starts
// with `header`, up to each table's end.
std::vector<std::string> markdown_table_rows(const std::string& text, const std::string& header) {
    std::vector<std::string> rows;
    bool in_table = false;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind(header, 0) == 0) {
            in_table = true;
            continue;
        }
        if (line.rfind("|", 0) != 0) {
            in_table = false;
            continue;
        }
        if (in_table && line.rfind("| ---", 0) != 0) rows.push_back(line);
    }
    return rows;
}

// The README's table of the variables of others ("| variable | owner | read
// for |"): each row's variables (a cell may name several) and its owner.
std::map<std::string, std::string> readme_others(const std::string& readme) {
    std::map<std::string, std::string> rows;
    const std::regex variable("`([A-Z][A-Z0-9_]*)`");
    for (const std::string& line : markdown_table_rows(readme, "| variable | owner |")) {
        const auto first = line.find('|', 1), second = line.find('|', first + 1);
        if (second == std::string::npos) continue;
        const std::string names = line.substr(1, first - 1), owner = trimmed(line.substr(first + 1, second - first - 1));
        for (auto it = std::sregex_iterator(names.begin(), names.end(), variable); it != std::sregex_iterator(); ++it)
            rows[(*it)[1]] = owner;
    }
    return rows;
}

}  // namespace

TEST_CASE("the README's table of the variables of others is the table's, owner for owner") {
    const auto documented = readme_others(contents(test_support::source_path("README.md")));
    REQUIRE(documented.size() > 20);
    std::map<std::string, std::string> table;
    for (const auto& setting : settings())
        if (!setting.owner.empty() && !setting.test_hook) table[std::string(setting.variable)] = setting.owner;
    CHECK(documented == table);
}

namespace {

// The README's option tables (the rows after a "| option | env variable |
// meaning |" header, up to the table's end): each row's flag (the first
// `--flag` of its first cell) and variable (the first PROVISION_ name of its
// second cell), either of which may be missing.
std::set<std::pair<std::string, std::string>> readme_rows(const std::string& readme) {
    std::set<std::pair<std::string, std::string>> rows;
    const std::regex flag("`(--[a-z][a-z-]*)"), variable("(PROVISION_[A-Z_]+)");
    for (const std::string& line : markdown_table_rows(readme, "| option | env variable |")) {
        // A cell may hold an escaped pipe (`quick\|full` in Markdown): not a cell boundary.
        const auto boundary = [&](std::size_t from) {
            auto at = line.find('|', from);
            while (at != std::string::npos && at > 0 && line[at - 1] == '\\') at = line.find('|', at + 1);
            return at;
        };
        const auto first = boundary(1);
        const auto second = first == std::string::npos ? first : boundary(first + 1);
        if (first == std::string::npos || second == std::string::npos) continue;
        const std::string option_cell = line.substr(1, first - 1), variable_cell = line.substr(first + 1, second - first - 1);
        std::smatch flag_match, variable_match;
        const bool has_flag = std::regex_search(option_cell, flag_match, flag);
        const bool has_variable = std::regex_search(variable_cell, variable_match, variable);
        if (has_flag || has_variable)
            rows.emplace(has_flag ? flag_match[1].str() : "", has_variable ? variable_match[1].str() : "");
    }
    return rows;
}

}  // namespace

TEST_CASE("the README's option tables are the table of settings, row for row") {
    const std::string readme = contents(test_support::source_path("README.md"));
    for (const auto& variable : table_names()) {
        INFO(variable);
        CHECK(readme.find(variable) != std::string::npos);
    }
    const auto documented = readme_rows(readme);
    REQUIRE(documented.size() > 20);
    std::set<std::pair<std::string, std::string>> table;
    for (const auto& setting : settings()) {
        if (setting.flag.empty() && !setting.variable.starts_with("PROVISION_")) continue;  // the workload's own
        if (setting.test_hook) continue;                                                     // a test build's
        table.emplace(setting.flag, setting.variable);
    }
    // --help and --version are CLI11's own, not settings.
    for (const auto& row : documented) {
        if (row.first == "--version" || row.first == "--help") continue;
        INFO(row.first << " | " << row.second);
        CHECK(table.count(row) == 1);
    }
    for (const auto& row : table) {
        INFO(row.first << " | " << row.second);
        CHECK(documented.count(row) == 1);
    }
}

TEST_CASE("--help names every variable once, and every flag's line its variable") {
    const std::string help = environment_help();
    for (const auto& setting : settings()) {
        if (setting.variable.empty() || setting.test_hook) continue;
        INFO(setting.variable);
        const std::string line = "  " + std::string(setting.variable) + " ";
        CHECK(help.find(line) != std::string::npos);
        CHECK(help.find(line, help.find(line) + 1) == std::string::npos);
        if (!setting.flag.empty()) {
            CHECK_THAT(help, Catch::Contains("[" + std::string(setting.flag) + "] "));
            CHECK_THAT(flag_help(setting), Catch::Contains("[env: " + std::string(setting.variable)));
        }
    }
}

namespace {

Options decoded(const GivenFlags& flags, const std::map<std::string, std::string>& environment) {
    Options options;
    decode_outputs(flags, environment, options);
    decode_settings(flags, environment, options);
    return options;
}

std::string refusal(const GivenFlags& flags, const std::map<std::string, std::string>& environment) {
    try {
        (void)decoded(flags, environment);
    } catch (const Error& error) {
        CHECK(error.code() == ExitCode::usage);
        return error.what();
    }
    return "(accepted)";
}

}  // namespace

TEST_CASE("a setting comes from its flag, else from its variable, into its typed field") {
    const std::map<std::string, std::string> environment = {
        {"PROVISION_WORKLOAD", " comfyui "}, {"PROVISION_RECIPE", "/a.toml:https://host:8443/r.toml"},
        {"PROVISION_VALIDATE_TIMEOUT", "2.5"}, {"PROVISION_DETECT_TIMEOUT", "7"},
        {"PROVISION_NVML_LIBRARY", "/opt/libnvml.so"}, {"PROVISION_CUDA_LIBRARY", ""},
        {"CUDA_VISIBLE_DEVICES", "1,0"}, {"PROVISION_ATTENTION", " Auto "}, {"PROVISION_DTYPE", "Float16"},
        {"PROVISION_FORCE", "yes"}, {"PROVISION_BUILTIN_RECIPES", "/r"}, {"PATH", "/usr/bin"},
        {"PROVISION_PYTHON", "/venv/bin/python"}};
    const Options options = decoded({}, environment);
    CHECK(options.workload == "comfyui");
    CHECK(options.recipes == std::vector<std::string>{"/a.toml", "https://host:8443/r.toml"});
    CHECK(options.validate_timeout_s == 2.5);
    CHECK(options.detect.time_limit == std::chrono::milliseconds(7000));
    CHECK(options.detect.nvml_library == "/opt/libnvml.so");
    CHECK(options.detect.cuda_library == "libcuda.so.1");  // empty keeps the default
    CHECK(options.detect.cuda_visible_devices == std::optional<std::string>("1,0"));
    CHECK_FALSE(options.overrides.attention.has_value());  // auto leaves the choice to provision
    CHECK(options.overrides.dtype == std::optional<std::string>("Float16"));
    CHECK(options.overrides.force);
    CHECK(options.builtin_recipes == "/r");
    CHECK(options.search_path == "/usr/bin");
    CHECK(options.python == "/venv/bin/python");
    CHECK(options.python_option_name == "PROVISION_PYTHON");

    const Options flags = decoded({{"--workload", {"vllm"}}, {"--recipe", {"/b.toml", "/c.toml"}},
                                   {"--python", {"python3"}}, {"--check", {}}},
                                  environment);
    CHECK(flags.workload == "vllm");
    CHECK(flags.recipes == std::vector<std::string>{"/b.toml", "/c.toml"});
    CHECK(flags.python_option_name == "--python");
    CHECK(flags.check);
    CHECK_FALSE(decoded({}, {}).detect.cuda_visible_devices.has_value());
}

TEST_CASE("a bad value is refused when the settings are read, naming where it came from") {
    CHECK(refusal({}, {{"PROVISION_DETECT_TIMEOUT", "soon"}}).find("PROVISION_DETECT_TIMEOUT") != std::string::npos);
    CHECK(refusal({}, {{"PROVISION_FORCE", "sure"}}).find("PROVISION_FORCE") != std::string::npos);
    CHECK(refusal({{"--fetch-timeout", {"0"}}}, {}).find("--fetch-timeout") != std::string::npos);
    CHECK(refusal({}, {{"PROVISION_VALIDATE", "fast"}}) == "PROVISION_VALIDATE=fast: expected quick, full, off or 0");
    CHECK_THAT(refusal({}, {{"PROVISION_METRICS", ""}}), Catch::Contains("PROVISION_METRICS is empty"));
    CHECK_THAT(refusal({{"--env-file", {""}}}, {}), Catch::Contains("--env-file is empty"));
    // Either validation flag decides alone: the variable is not even read.
    CHECK(decoded({{"--no-validate", {}}}, {{"PROVISION_VALIDATE", "fast"}}).validate == ValidateMode::off);
    CHECK(decoded({{"--validate", {"full"}}}, {{"PROVISION_VALIDATE", "fast"}}).validate == ValidateMode::full);
    CHECK(decoded({}, {{"PROVISION_VALIDATE", "0"}}).validate == ValidateMode::off);
    CHECK(decoded({}, {{"PROVISION_VALIDATE", ""}}).validate == ValidateMode::quick);
}

TEST_CASE("no file below src/app/, nor of kernels/, reads the process environment itself") {
    const std::regex reads(R"(\bgetenv\s*\(|\bextern\s+char\s*\*\*\s*environ\b)");
    // Copying provision's environment into a child's is not reading a setting.
    const std::set<std::string> allowed = {"child_process_posix.cpp"};
    int read = 0;
    for (const char* root : {"src", "kernels"})
        for (const auto& entry : std::filesystem::recursive_directory_iterator(test_support::source_path(root))) {
            const auto path = entry.path();
            const auto extension = path.extension();
            if (extension != ".cpp" && extension != ".h" && extension != ".cu" && extension != ".cuh") continue;
            if (path.parent_path().filename() == "app" || path.parent_path().filename() == "src") continue;
            if (allowed.count(path.filename().string()) > 0) continue;
            ++read;
            INFO(path.string());
            CHECK_FALSE(std::regex_search(contents(path), reads));
        }
    CHECK(read > 100);  // both trees were read
}

TEST_CASE("the test hooks are rows of the table in test builds, and absent from release builds") {
    std::set<std::string> hooks;
    for (const auto& setting : settings())
        if (setting.test_hook) {
            CHECK(setting.variable.starts_with("PROVISION_TEST_"));
            CHECK(setting.flag.empty());
            hooks.insert(std::string(setting.variable));
        }
    if (!kFaultInjection) {
        CHECK(hooks.empty());
        return;
    }
    // Every PROVISION_TEST_ name the sources hold is one of them.
    const std::regex name(R"(PROVISION_TEST_[A-Z_]+)");
    for (const char* root : {"src", "kernels"})
        for (const auto& entry : std::filesystem::recursive_directory_iterator(test_support::source_path(root))) {
            if (!entry.is_regular_file()) continue;
            const std::string text = contents(entry.path());
            for (auto it = std::sregex_iterator(text.begin(), text.end(), name); it != std::sregex_iterator(); ++it) {
                INFO(entry.path().string() << ": " << it->str());
                CHECK(hooks.count(it->str()) == 1);
            }
        }
    const std::string help = environment_help();
    for (const auto& hook : hooks) CHECK(help.find(hook) == std::string::npos);  // not a user's setting
}

TEST_CASE("a switch's flag takes no value: --allow-http=no is a usage error naming it, for every switch",
          "[settings]") {
    for (const auto& setting : settings()) {
        if (setting.shape != SettingShape::switch_flag || setting.flag.empty()) continue;
        const std::string flag(setting.flag);
        INFO(flag);
        for (const char* value : {"no", "false", "0", "1", "yes", "x"}) {
            const std::string message = refusal({{flag, {value}}}, {});
            CHECK_THAT(message, Catch::StartsWith(flag + "=" + value + ": " + flag + " is a switch and takes no value"));
        }
        CHECK(refusal({{flag, {}}}, {}) == "(accepted)");  // alone
    }
    CHECK_FALSE(decoded({}, {{"PROVISION_ALLOW_HTTP", "no"}}).fetch.allow_http);  // the variable reads a value
    CHECK(decoded({{"--allow-http", {}}}, {}).fetch.allow_http);
}

TEST_CASE("a setting that names a path refuses an empty value, from its flag or its variable alike", "[settings]") {
    std::size_t paths = 0;
    for (const auto& setting : settings()) {
        if (setting.shape != SettingShape::path) continue;
        ++paths;
        if (!setting.flag.empty()) {
            INFO(setting.flag);
            CHECK_THAT(refusal({{std::string(setting.flag), {""}}}, {}),
                       Catch::StartsWith(std::string(setting.flag) + " is empty"));
        }
        if (!setting.variable.empty()) {
            INFO(setting.variable);
            CHECK_THAT(refusal({}, {{std::string(setting.variable), ""}}),
                       Catch::StartsWith(std::string(setting.variable) + " is empty"));
        }
    }
    CHECK(paths >= 7);  // the outputs, --python, --gpu-fixture, --print-recipes, the recipe and cache folders
    CHECK_THAT(refusal({{"--python", {""}}}, {}), Catch::StartsWith("--python is empty"));
    CHECK_THAT(refusal({}, {{"PROVISION_PYTHON", ""}}), Catch::StartsWith("PROVISION_PYTHON is empty"));
    CHECK_THAT(refusal({{"--recipe", {"/a.toml", ""}}}, {}), Catch::StartsWith("--recipe is empty"));
    // A list's variable drops empty entries, as PATH does; other settings read empty as unset.
    CHECK(decoded({}, {{"PROVISION_RECIPE", "/a.toml::"}}).recipes == std::vector<std::string>{"/a.toml"});
    CHECK(decoded({}, {{"PROVISION_CUDA_LIBRARY", ""}}).detect.cuda_library == "libcuda.so.1");
}

TEST_CASE("every value a setting's refusal echoes is escaped and cut, whatever the setting", "[settings][messages]") {
    const std::string hostile = "\x1b[31m\nprovision: error: forged\x07" + std::string(120 * 1024, '9');
    for (const auto& setting : settings()) {
        if (!setting.decode) continue;
        for (const bool flag : {true, false}) {
            if ((flag ? setting.flag : setting.variable).empty()) continue;
            const std::string name(flag ? setting.flag : setting.variable);
            INFO(name);
            const std::string message = flag ? refusal({{name, {hostile}}}, {}) : refusal({}, {{name, hostile}});
            if (message == "(accepted)") continue;
            CHECK(std::none_of(message.begin(), message.end(),
                               [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7F; }));
            CHECK(message.size() < 512);
        }
    }
    CHECK_THAT(refusal({{"--worker-processes", {hostile}}}, {}), Catch::Contains("bytes in all"));
    CHECK_THAT(refusal({{"--validate", {hostile}}}, {}), Catch::StartsWith("--validate=\\x1b[31m\\x0aprovision"));
}

TEST_CASE("a value is cut for a message only through Echoed: no other spelling of the 64-byte cut in src/",
          "[messages]") {
    const std::regex cut(R"(printable\([^;]*,\s*(64|kLongestEchoedValue)\s*\))");
    for (const auto& entry : std::filesystem::recursive_directory_iterator(test_support::source_path("src"))) {
        const auto path = entry.path();
        if (path.extension() != ".cpp" && path.extension() != ".h") continue;
        if (path.filename() == "text.h") continue;  // where Echoed is defined
        INFO(path.string());
        CHECK_FALSE(std::regex_search(contents(path), cut));
    }
}

TEST_CASE("the launchers' variables are rows of the table, decoded into the job's shape's inputs", "[network][job]") {
    const Options options = decoded({}, {{"PET_NNODES", " 2:4 "}, {"PET_NODE_RANK", "3"}, {"WORLD_SIZE", "16"},
                                         {"LOCAL_WORLD_SIZE", "8"}, {"RANK", ""}, {"SLURM_JOB_NUM_NODES", "5"},
                                         {"SLURM_NNODES", "6"}, {"PET_MASTER_ADDR", "pet-master"},
                                         {"MASTER_ADDR", " 10.0.0.1 "}});
    const auto& launcher = options.launcher;
    CHECK(launcher.pet_nnodes == 4);  // elastic MIN:MAX: at most MAX nodes
    CHECK(launcher.pet_node_rank == 3);
    CHECK(launcher.world_size == 16);
    CHECK(launcher.local_world_size == 8);
    CHECK_FALSE(launcher.rank);              // empty is unset
    CHECK(launcher.slurm_nnodes == 6);       // SLURM_NNODES over SLURM_JOB_NUM_NODES
    CHECK(launcher.master_addr == "10.0.0.1");  // MASTER_ADDR over PET_MASTER_ADDR
    CHECK(launcher.ignored.empty());
    CHECK(decoded({}, {{"PET_MASTER_ADDR", "pet-master"}}).launcher.master_addr == "pet-master");
}

TEST_CASE("a launcher's variable that is no whole number is left out, never refused", "[network][job]") {
    const Options options = decoded({}, {{"RANK", "senior"}, {"NODE_RANK", "-1"}, {"NNODES", "2"}});
    CHECK(refusal({}, {{"RANK", "senior"}}) == "(accepted)");
    CHECK_FALSE(options.launcher.rank);
    CHECK_FALSE(options.launcher.node_rank);
    CHECK(options.launcher.nnodes == 2);
    CHECK(options.launcher.ignored == std::vector<std::string>{"NODE_RANK=-1", "RANK=senior"});
}
