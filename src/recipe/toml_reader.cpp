#include "recipe/toml_reader.h"

#include <algorithm>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "core/error.h"
#include "core/suggest.h"

namespace provision {

SourceRef source_of(const toml::node& node, const std::string& fallback_file) {
    const auto& region = node.source();
    SourceRef ref;
    ref.file = region.path ? *region.path : fallback_file;
    ref.line = static_cast<int>(region.begin.line);
    ref.column = static_cast<int>(region.begin.column);
    return ref;
}

std::optional<std::pair<std::size_t, std::size_t>> non_ascii_outside_strings(std::string_view text) {
    enum class State { plain, comment, basic, literal, multiline_basic, multiline_literal };
    State state = State::plain;
    std::size_t line = 1, column = 1;
    std::size_t skip = 0;   // bytes of a delimiter already judged
    bool escaped = false;   // the previous byte was a backslash in a basic string
    auto run_of = [&](std::size_t at, char quote) {
        std::size_t n = 0;
        while (at + n < text.size() && text[at + n] == quote) ++n;
        return n;
    };
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (skip > 0) {
            --skip;
        } else if (escaped) {
            escaped = false;
        } else {
            switch (state) {
            case State::plain:
                if (static_cast<unsigned char>(c) >= 0x80) return std::make_pair(line, column);
                if (c == '#') state = State::comment;
                else if (c == '"' && run_of(i, '"') >= 3) state = State::multiline_basic, skip = 2;
                else if (c == '\'' && run_of(i, '\'') >= 3) state = State::multiline_literal, skip = 2;
                else if (c == '"') state = State::basic;
                else if (c == '\'') state = State::literal;
                break;
            case State::comment:
                if (c == '\n') state = State::plain;
                break;
            case State::basic:
                if (c == '\\') escaped = true;
                else if (c == '"' || c == '\n') state = State::plain;
                break;
            case State::literal:
                if (c == '\'' || c == '\n') state = State::plain;
                break;
            case State::multiline_basic:
            case State::multiline_literal: {
                const char quote = state == State::multiline_basic ? '"' : '\'';
                if (quote == '"' && c == '\\') {
                    escaped = true;
                    // A line-ending backslash: toml++ 3.3 misreads a non-ASCII
                    // character as the first one after the skipped whitespace.
                    std::size_t j = i + 1;
                    while (j < text.size() && (text[j] == ' ' || text[j] == '\t')) ++j;
                    if (j < text.size() && (text[j] == '\n' || text[j] == '\r')) {
                        std::size_t next_line = line, next_column = column;
                        while (j < text.size() && (text[j] == ' ' || text[j] == '\t' || text[j] == '\n' || text[j] == '\r')) {
                            if (text[j] == '\n') next_line += 1, next_column = 1;
                            else next_column += 1;
                            ++j;
                        }
                        if (j < text.size() && static_cast<unsigned char>(text[j]) >= 0x80)
                            return std::make_pair(next_line, next_column);
                    }
                } else if (c == quote) {
                    // Up to two quotes may stand just before the closing three.
                    const std::size_t n = run_of(i, quote);
                    if (n >= 3) state = State::plain;
                    skip = std::min<std::size_t>(n, 5) - 1;
                }
                break;
            }
            }
        }
        if (c == '\n') line += 1, column = 1;
        else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) column += 1;  // count characters, not bytes
    }
    return std::nullopt;
}

toml::table parse_toml(std::string_view text, const std::string& source) {
    // TOML 1.0 allows non-ASCII only in strings and comments.  Such input is
    // malformed anyway, and toml++ 3.3 (Debian 12) reaches undefined
    // behaviour on some of it (U+00A1..U+0499 where whitespace may stand):
    // it is refused here before toml++ sees it.
    if (const auto at = non_ascii_outside_strings(text))
        throw Error(ExitCode::invalid_input,
                    fmt::format("{}:{}:{}: a character outside ASCII stands outside every string and comment "
                                "(TOML allows it only inside quotes or after '#'), or first after a line-ending "
                                "backslash (which the TOML library cannot read: start that line with an ASCII character)",
                                source, at->first, at->second));
    try {
        return toml::parse(text, source);
    } catch (const toml::parse_error& error) {
        const auto& begin = error.source().begin;
        throw Error(ExitCode::invalid_input,
                    fmt::format("{}:{}:{}: {}", source, begin.line, begin.column, error.description()));
    }
}

toml::table parse_toml_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::string text;
    if (in) text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (!in.is_open() || in.bad()) throw Error(ExitCode::invalid_input, fmt::format("{}: cannot be read", path));
    return parse_toml(text, path);
}

void throw_at(const toml::node& node, const std::string& file, const std::string& message) {
    throw Error(ExitCode::invalid_input, fmt::format("{}: {}", source_of(node, file).str(), message));
}

TableReader::TableReader(const toml::table& table, std::string file, std::string where)
    : table_(table), file_(std::move(file)), where_(std::move(where)) {}

const toml::node* TableReader::node(const std::string& key) { return table_.get(key); }

std::optional<std::string> TableReader::string(const std::string& key) {
    const toml::node* n = table_.get(key);
    if (!n) return std::nullopt;
    if (!n->is_string()) throw_at(*n, file_, fmt::format("'{}' in {} must be a string", key, where_));
    return n->as_string()->get();
}

std::optional<std::vector<std::string>> TableReader::string_array(const std::string& key) {
    const toml::node* n = table_.get(key);
    if (!n) return std::nullopt;
    const toml::array* array = n->as_array();
    if (!array) throw_at(*n, file_, fmt::format("'{}' in {} must be an array of strings", key, where_));
    std::vector<std::string> values;
    for (const toml::node& element : *array) {
        if (!element.is_string())
            throw_at(element, file_, fmt::format("'{}' in {} must hold only strings", key, where_));
        values.push_back(element.as_string()->get());
    }
    return values;
}

std::optional<ComputeCapability> TableReader::capability(const std::string& key) {
    const auto text = string(key);
    if (!text) return std::nullopt;
    const auto cc = ComputeCapability::parse(*text);
    if (!cc)
        throw_at(*table_.get(key), file_,
                 fmt::format("'{}' in {} must be a compute capability like \"8.6\", not \"{}\"", key, where_,
                             *text));
    return cc;
}

std::optional<std::map<std::string, std::string>> TableReader::string_map(const std::string& key) {
    const toml::node* n = table_.get(key);
    if (!n) return std::nullopt;
    const toml::table* t = n->as_table();
    if (!t) throw_at(*n, file_, fmt::format("'{}' in {} must be a table of strings", key, where_));
    std::map<std::string, std::string> values;
    for (const auto& [name, value] : *t) {
        if (!value.is_string())
            throw_at(value, file_,
                     fmt::format("'{}.{}' in {} must be a string", key, std::string(name.str()), where_));
        values[std::string(name.str())] = value.as_string()->get();
    }
    return values;
}

const toml::table* TableReader::table(const std::string& key) {
    const toml::node* n = table_.get(key);
    if (!n) return nullptr;
    if (!n->is_table()) throw_at(*n, file_, fmt::format("'{}' in {} must be a table", key, where_));
    return n->as_table();
}

void TableReader::reject_unknown_keys(const std::vector<std::string>& known) const {
    for (const auto& [key, value] : table_) {
        const std::string name(key.str());
        if (std::find(known.begin(), known.end(), name) != known.end()) continue;
        const std::string hint = closest_match(name, known);
        std::string message = fmt::format("unknown key '{}' in {}", name, where_);
        if (!hint.empty()) message += fmt::format("; did you mean '{}'?", hint);
        else message += fmt::format("; known keys: {}", fmt::join(known, ", "));
        // The key's own position is more precise than the value's.
        const auto& region = key.source();
        if (region.begin.line != 0) {
            throw Error(ExitCode::invalid_input,
                        fmt::format("{}:{}:{}: {}", region.path ? *region.path : file_, region.begin.line,
                                    region.begin.column, message));
        }
        throw_at(value, file_, message);
    }
}

}  // namespace provision
