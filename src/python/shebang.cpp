#include "python/shebang.h"

#include "python/file_probe.h"

namespace provision {
namespace {

std::vector<std::string> split_blanks(std::string_view text) {
    std::vector<std::string> words;
    std::size_t at = 0;
    while (true) {
        at = text.find_first_not_of(" \t", at);
        if (at == std::string_view::npos) break;
        const auto end = text.find_first_of(" \t", at);
        words.emplace_back(text.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at));
        if (end == std::string_view::npos) break;
        at = end;
    }
    return words;
}

std::string_view line_at(std::string_view text, std::size_t& at) {
    const auto end = text.find('\n', at);
    std::string_view line = text.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
    at = end == std::string_view::npos ? text.size() : end + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return line;
}

// pip's second line: '''exec' "/path/bin/python" "$0" "$@"
std::optional<std::string> long_path_exec(std::string_view line) {
    constexpr std::string_view kExec = "'''exec' ";
    if (!line.starts_with(kExec)) return std::nullopt;
    line.remove_prefix(kExec.size());
    std::string_view program;
    if (line.starts_with('"')) {
        const auto close = line.find('"', 1);
        if (close == std::string_view::npos) return std::nullopt;
        program = line.substr(1, close - 1);
    } else {
        program = line.substr(0, line.find(' '));
    }
    // The exec line with nothing after it names no program.
    if (program.empty()) return std::nullopt;
    return std::string(program);
}

}  // namespace

std::optional<Shebang> parse_shebang(std::string_view head) {
    if (!head.starts_with("#!")) return std::nullopt;
    std::size_t at = 2;
    const std::vector<std::string> words = split_blanks(line_at(head, at));
    if (words.empty()) return std::nullopt;

    Shebang shebang;
    const std::string_view program_name = file_probe::file_name_of(words.front());
    if (program_name == "env") {
        // env [-S] [-i] [-u NAME] [NAME=VALUE ...] program [arguments]
        std::size_t i = 1;
        while (i < words.size()) {
            const std::string& word = words[i];
            if (word == "-u" || word == "--unset" || word == "-C" || word == "--chdir") {
                i += 2;
            } else if (word.starts_with('-') || word.find('=') != std::string::npos) {
                ++i;
            } else {
                break;
            }
        }
        if (i >= words.size()) return std::nullopt;
        shebang.program = words[i];
        shebang.through_env = shebang.program.find('/') == std::string::npos;
        shebang.arguments.assign(words.begin() + static_cast<std::ptrdiff_t>(i) + 1, words.end());
        return shebang;
    }
    if (program_name == "sh") {
        if (auto exec = long_path_exec(line_at(head, at))) {
            shebang.program = *exec;
            return shebang;
        }
    }
    shebang.program = words.front();
    shebang.arguments.assign(words.begin() + 1, words.end());
    return shebang;
}

}  // namespace provision
