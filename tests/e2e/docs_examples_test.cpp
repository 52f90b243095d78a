// Every example of README.md, docs/USAGE.md and docs/WORKLOADS.md, run
// against the built binary, so a document cannot drift from it.  An example
// is a fenced block right after a marker line, `<!-- example -->` or
// `<!-- example: NAME=value ... -->` (variables for its commands); a block
// that runs provision must carry one, or `<!-- not run: why -->`.  What each
// kind of block asserts is in docs/TESTING.md, "The documents' examples".
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "harness.h"

namespace {

namespace fs = std::filesystem;

struct Line {
    int number = 0;  // in the document, from 1
    std::string text;
};

struct Block {
    std::string document;
    int line = 0;           // the opening fence's
    std::string language;   // the info string's first word
    std::string marker;     // "example", "not run" or ""
    std::map<std::string, std::string> env;  // the marker's variables
    std::vector<Line> lines;
};

constexpr const char* kDocuments[] = {"README.md", "docs/USAGE.md", "docs/WORKLOADS.md"};

std::vector<Block> fenced_blocks(const std::string& document) {
    std::vector<Block> blocks;
    std::istringstream in(e2e::read_file(e2e::source_path(document)));
    const std::regex marker(R"(^<!-- (example|not run)(: (.*))? -->\s*$)");
    std::string previous;
    Block* open = nullptr;
    int number = 0;
    for (std::string text; std::getline(in, text);) {
        ++number;
        if (open) {
            if (text.rfind("```", 0) == 0) {
                open = nullptr;
            } else {
                open->lines.push_back({number, text});
            }
        } else if (text.rfind("```", 0) == 0) {
            Block block;
            block.document = document;
            block.line = number;
            block.language = text.substr(3, text.find(' ') == std::string::npos ? std::string::npos : text.find(' ') - 3);
            std::smatch found;
            if (std::regex_match(previous, found, marker)) {
                block.marker = found[1];
                if (block.marker == "example") {
                    std::istringstream words(found[3].str());
                    for (std::string word; words >> word;)
                        block.env[word.substr(0, word.find('='))] = word.substr(word.find('=') + 1);
                }
            }
            blocks.push_back(std::move(block));
            open = &blocks.back();
        }
        previous = text;
    }
    return blocks;
}

// `text` as sh splits it into words: blanks outside quotes separate, single
// quotes keep everything, double quotes and a backslash keep the next
// character; enough for the documents' commands.
std::vector<std::string> shell_words(const std::string& text) {
    std::vector<std::string> words;
    std::string word;
    bool in_word = false;
    char quote = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quote) {
            if (c == quote) quote = 0;
            else if (c == '\\' && quote == '"' && i + 1 < text.size()) word += text[++i];
            else word += c;
        } else if (c == '\'' || c == '"') {
            quote = c;
            in_word = true;
        } else if (c == '\\' && i + 1 < text.size()) {
            word += text[++i];
            in_word = true;
        } else if (c == ' ' || c == '\t') {
            if (in_word) words.push_back(word);
            word.clear();
            in_word = false;
        } else {
            word += c;
            in_word = true;
        }
    }
    if (in_word) words.push_back(word);
    return words;
}

// `line` without a trailing "# comment" (a '#' after a blank, outside quotes).
std::string without_comment(const std::string& line) {
    char quote = 0;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char c = line[i];
        if (quote) {
            if (c == quote) quote = 0;
        } else if (c == '\'' || c == '"') {
            quote = c;
        } else if (c == '#' && (i == 0 || line[i - 1] == ' ')) {
            std::string code = line.substr(0, i);
            code.erase(code.find_last_not_of(' ') + 1);
            return code;
        }
    }
    return line;
}

std::string single_quoted(const std::string& word) {
    std::string quoted = "'";
    for (const char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return quoted + "'";
}

// A block runs provision where a command (not a comment) names it.
bool runs_provision(const Block& block) {
    const std::regex word(R"((^|[\s"$])provision(\s|"|$))");
    for (const Line& line : block.lines)
        if (std::regex_search(without_comment(line.text), word)) return true;
    return false;
}

// The folder an example runs in, as if it were the root of a container:
// provision and the workloads' stand-ins in usr/local/bin, the repository's
// tests/ and recipes/ beside them.  Paths under it are printed without it.
class ExampleRoot {
public:
    ExampleRoot() {
        const std::string bin = dir_.file("usr/local/bin");
        fs::create_directories(bin);
        fs::create_directories(dir_.file("home"));
        fs::create_symlink(PROVISION_BINARY, bin + "/provision");
        // A workload that writes down its arguments and environment.
        const std::string stub = "#!/bin/sh\n{ basename \"$0\"; for a in \"$@\"; do printf '%s\\n' \"$a\"; done; } "
                                 ">\"$EXAMPLE_ARGS\"\nenv >\"$EXAMPLE_ENV\"\n";
        for (const char* name : {"python", "python3", "vllm"}) {
            e2e::write_file(bin + "/" + name, stub);
            fs::permissions(bin + "/" + name, fs::perms::owner_all);
        }
        for (const char* folder : {"tests", "recipes"}) fs::create_symlink(e2e::source_path(folder), dir_.file(folder));
    }

    const std::string& path() const { return dir_.path(); }

    // What each of the block's commands runs with: a simulated H100 unless
    // the marker names another machine, the env file under the root (where
    // one is written by default), the stand-ins' record files.
    std::map<std::string, std::string> environment(const Block& block, const std::string& command) const {
        std::map<std::string, std::string> env = {
            {"PATH", dir_.file("usr/local/bin") + ":/usr/bin:/bin"},
            {"HOME", dir_.file("home")},
            {"PROVISION_GPU_FIXTURE", "tests/fixtures/gpus/h100.toml"},
            {"EXAMPLE_ARGS", dir_.file("args")},
            {"EXAMPLE_ENV", dir_.file("env")},
        };
        // --check and --repeat write no env file unless one is named.
        const bool writes_default = command.find("--check") == std::string::npos &&
                                    command.find("--repeat") == std::string::npos &&
                                    command.find("--env-file") == std::string::npos;
        if (writes_default) env["PROVISION_ENV_FILE"] = dir_.file("workspace/venv/.env_settings");
        for (const auto& [name, value] : block.env) env[name] = value;
        return env;
    }

    // `text` with the root's path left out ("/tmp/x/workspace/..." -> "/workspace/...").
    std::string as_in_container(std::string text) const {
        for (std::size_t at; (at = text.find(dir_.path())) != std::string::npos;) text.erase(at, dir_.path().size());
        return text;
    }

    e2e::Result run(const Block& block, const std::string& command) const {
        fs::remove(dir_.file("args"));
        fs::remove(dir_.file("env"));
        e2e::RunOptions options;
        options.cwd = dir_.path();
        options.kill_after_s = 60;
        return e2e::run("/bin/sh", {"-c", command}, environment(block, command), options);
    }

    // The stand-in workload's argv (its name first), empty where none ran.
    std::vector<std::string> workload_arguments() const {
        std::vector<std::string> words;
        if (!fs::exists(dir_.file("args"))) return words;
        std::istringstream lines(e2e::read_file(dir_.file("args")));
        for (std::string line; std::getline(lines, line);) words.push_back(line);
        return words;
    }

    std::map<std::string, std::string> workload_environment() const {
        std::map<std::string, std::string> env;
        if (!fs::exists(dir_.file("env"))) return env;
        std::istringstream lines(e2e::read_file(dir_.file("env")));
        for (std::string line; std::getline(lines, line);)
            if (const auto equals = line.find('='); equals != std::string::npos)
                env[line.substr(0, equals)] = line.substr(equals + 1);
        return env;
    }

private:
    e2e::TempDir dir_;
};

std::string where(const Block& block, int line) { return block.document + ":" + std::to_string(line); }

// sh blocks: each command (a line, continued by a trailing '\'), then what
// the comments after it claim: "# execs: WORDS" (the workload's argv),
// "#   NAME=value ..." under it (its environment), "# exit N" (default 0).
void run_shell_block(const Block& block) {
    struct Command {
        int line = 0;
        std::string text;
        std::vector<std::string> execs;
        std::map<std::string, std::string> env;
        int exit_code = 0;
    };
    std::vector<Command> commands;
    std::string pending;
    for (const Line& line : block.lines) {
        const std::string& text = line.text;
        if (!pending.empty() || (!text.empty() && text.front() != '#')) {
            const std::string code = without_comment(text);
            if (!code.empty() && code.back() == '\\') {
                pending += code.substr(0, code.size() - 1);
                continue;
            }
            if (!(pending + code).empty()) {
                Command command;
                command.line = line.number;
                command.text = pending + code;
                commands.push_back(std::move(command));
            }
            pending.clear();
            continue;
        }
        if (commands.empty()) continue;
        Command& command = commands.back();
        if (text.rfind("# execs: ", 0) == 0) {
            command.execs = shell_words(text.substr(9));
        } else if (text.rfind("#   ", 0) == 0 && !command.execs.empty()) {
            for (const auto& word : shell_words(text.substr(4)))
                command.env[word.substr(0, word.find('='))] = word.substr(word.find('=') + 1);
        } else if (text.rfind("# exit ", 0) == 0) {
            command.exit_code = std::stoi(text.substr(7));
        }
    }
    REQUIRE_FALSE(commands.empty());
    for (const Command& command : commands) {
        ExampleRoot root;
        const auto result = root.run(block, command.text);
        INFO(where(block, command.line) << ": " << command.text << "\n" << result.out << result.err);
        CHECK(result.exit_code == command.exit_code);
        if (!command.execs.empty()) CHECK(root.workload_arguments() == command.execs);
        const auto env = root.workload_environment();
        for (const auto& [name, value] : command.env) {
            INFO(name);
            CHECK(env.count(name) == 1);
            if (env.count(name)) CHECK(env.at(name) == value);
        }
    }
}

// Whether `actual` is what `expected` shows: "..." in a line stands for any
// text, and a line of "..." alone for any number of lines.
bool line_matches(const std::string& expected, const std::string& actual) {
    std::size_t at = 0, from = 0;
    bool first = true;
    while (true) {
        const std::size_t dots = expected.find("...", from);
        const std::string part = expected.substr(from, dots == std::string::npos ? std::string::npos : dots - from);
        if (dots == std::string::npos) {
            return first ? actual == part
                         : actual.size() >= at + part.size() && actual.compare(actual.size() - part.size(), part.size(), part) == 0;
        }
        if (first) {
            if (actual.compare(0, part.size(), part) != 0) return false;
            at = part.size();
        } else {
            const std::size_t found = actual.find(part, at);
            if (found == std::string::npos) return false;
            at = found + part.size();
        }
        first = false;
        from = dots + 3;
    }
}

bool lines_match(const std::vector<std::string>& expected, std::size_t e, const std::vector<std::string>& actual,
                 std::size_t a) {
    if (e == expected.size()) return a == actual.size();
    if (expected[e] == "...") {
        for (std::size_t skip = a; skip <= actual.size(); ++skip)
            if (lines_match(expected, e + 1, actual, skip)) return true;
        return false;
    }
    return a < actual.size() && line_matches(expected[e], actual[a]) && lines_match(expected, e + 1, actual, a + 1);
}

std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
}

// console blocks: "$ COMMAND" lines, each followed by what it prints
// (stdout and stderr together); the shell must exit 0.
void run_console_block(const Block& block) {
    std::size_t i = 0;
    REQUIRE((!block.lines.empty() && block.lines.front().text.rfind("$ ", 0) == 0));
    while (i < block.lines.size()) {
        const Line& command = block.lines[i++];
        std::vector<std::string> expected;
        while (i < block.lines.size() && block.lines[i].text.rfind("$ ", 0) != 0) expected.push_back(block.lines[i++].text);
        ExampleRoot root;
        const auto result = root.run(block, "exec 2>&1\n" + command.text.substr(2));
        const auto actual = split_lines(root.as_in_container(result.out));
        INFO(where(block, command.number) << ": " << command.text << "\nprinted:\n" << root.as_in_container(result.out));
        CHECK(result.exit_code == 0);
        CHECK(lines_match(expected, 0, actual, 0));
    }
}

// dockerfile blocks: the ENTRYPOINT and CMD (exec form) as the container
// runs them: exit 0 (or "# exit N"), the CMD handed off to as it is.
void run_dockerfile_block(const Block& block) {
    std::vector<std::string> entrypoint, cmd;
    int exit_code = 0;
    for (const Line& line : block.lines) {
        if (line.text.rfind("ENTRYPOINT ", 0) == 0)
            entrypoint = nlohmann::json::parse(line.text.substr(11)).get<std::vector<std::string>>();
        if (line.text.rfind("CMD ", 0) == 0) cmd = nlohmann::json::parse(line.text.substr(4)).get<std::vector<std::string>>();
        if (line.text.rfind("# exit ", 0) == 0) exit_code = std::stoi(line.text.substr(7));
    }
    REQUIRE_FALSE(entrypoint.empty());
    std::string command;
    for (const auto& word : entrypoint) command += single_quoted(word) + " ";
    for (const auto& word : cmd) command += single_quoted(word) + " ";
    ExampleRoot root;
    const auto result = root.run(block, command);
    INFO(where(block, block.line) << ": " << command << "\n" << result.out << result.err);
    CHECK(result.exit_code == exit_code);
    if (exit_code == 0 && !cmd.empty()) {
        std::vector<std::string> handed = cmd;
        handed.front() = fs::path(handed.front()).filename().string();
        CHECK(root.workload_arguments() == handed);
    }
}

// toml blocks: a recipe, merged over the built-in ones by `provision --check`.
void run_recipe_block(const Block& block) {
    ExampleRoot root;
    std::string recipe;
    for (const Line& line : block.lines) recipe += line.text + "\n";
    e2e::write_file(root.path() + "/example.toml", recipe);
    const auto result = root.run(block, "provision --check --recipe example.toml");
    INFO(where(block, block.line) << "\n" << result.err);
    CHECK(result.exit_code == 0);
}

}  // namespace

TEST_CASE("every block of the documents that runs provision is an example, or says why it is not run") {
    int examples = 0;
    for (const char* document : kDocuments) {
        for (const Block& block : fenced_blocks(document)) {
            if (block.marker == "example") ++examples;
            if (!runs_provision(block)) continue;
            INFO(where(block, block.line));
            CHECK_FALSE(block.marker.empty());
        }
    }
    CHECK(examples >= 15);
}

TEST_CASE("the documents' examples do what they say") {
    for (const char* document : kDocuments) {
        for (const Block& block : fenced_blocks(document)) {
            if (block.marker != "example") continue;
            DYNAMIC_SECTION(where(block, block.line)) {
                if (block.language == "sh") run_shell_block(block);
                else if (block.language == "console") run_console_block(block);
                else if (block.language == "dockerfile") run_dockerfile_block(block);
                else if (block.language == "toml") run_recipe_block(block);
                else FAIL("an example must be sh, console, dockerfile or toml, not '" << block.language << "'");
            }
        }
    }
}

TEST_CASE("the examples' shell words and output patterns are read as documented") {
    CHECK(shell_words(R"(python generate.py --prompt "a lighthouse" 'x y' a\ b)") ==
          std::vector<std::string>{"python", "generate.py", "--prompt", "a lighthouse", "x y", "a b"});
    CHECK(without_comment("provision --check   # lint") == "provision --check");
    CHECK(without_comment("echo '# not a comment'") == "echo '# not a comment'");
    CHECK(line_matches("digest ... built", "digest 5e95 built"));
    CHECK_FALSE(line_matches("digest ... built", "digest 5e95"));
    CHECK(lines_match({"a", "...", "d"}, 0, {"a", "b", "c", "d"}, 0));
    CHECK_FALSE(lines_match({"a", "d"}, 0, {"a", "b", "d"}, 0));
}
