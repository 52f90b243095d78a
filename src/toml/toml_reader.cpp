#include "toml/toml_reader.h"

#include <algorithm>
#include <limits>
#include <variant>

#include <fmt/format.h>

#include "core/error.h"
#include "core/suggest.h"
#include "core/text.h"
#include "toml/toml_guard.h"

namespace provision {

SourceRef source_of(const toml::node& node, const std::string& fallback_file) {
    const auto& region = node.source();
    SourceRef ref;
    ref.file = region.path ? *region.path : fallback_file;
    ref.line = static_cast<int>(region.begin.line);
    ref.column = static_cast<int>(region.begin.column);
    return ref;
}

namespace {

// Puts back, in every string and key, what guard_toml_text() stood in for.
void restore_stand_ins(toml::node& node) {
    if (auto* text = node.as_string()) {
        text->get() = restore_toml_text(text->get());
    } else if (auto* array = node.as_array()) {
        for (auto& element : *array) restore_stand_ins(element);
    } else if (auto* table = node.as_table()) {
        std::vector<toml::key> renamed;
        for (auto&& [key, value] : *table) {
            restore_stand_ins(value);
            if (restore_toml_text(key.str()) != key.str()) renamed.push_back(key);
        }
        for (const auto& key : renamed) {
            const auto old = table->find(key.str());
            table->insert(toml::key(restore_toml_text(key.str()), key.source()), std::move(old->second));
            table->erase(key.str());
        }
    }
}

}  // namespace

toml::table parse_toml(std::string_view text, const std::string& source) {
    // Debian 12's toml++ reaches undefined behaviour on some code points:
    // toml_guard.h says how no input can reach it.
    const auto guarded = guard_toml_text(text);
    if (const auto* unreadable = std::get_if<UnreadableText>(&guarded))
        throw Error(ExitCode::invalid_input, fmt::format("{}:{}:{}: {}", echoed_path(source),
                                                         unreadable->line, unreadable->column, unreadable->reason));
    const auto& safe = std::get<GuardedText>(guarded);
    try {
        toml::table table = toml::parse(safe.text, source);
        if (safe.substitutions > 0) restore_stand_ins(table);
        return table;
    } catch (const toml::parse_error& error) {
        const auto& begin = error.source().begin;
        // toml++ quotes what it saw: escaped like every echoed value.
        throw Error(ExitCode::invalid_input,
                    fmt::format("{}:{}:{}: {}", echoed_path(source), begin.line, begin.column,
                                printable(restore_toml_text(error.description()), kLongestMessage)));
    }
}

void throw_at(const toml::node& node, const std::string& file, const std::string& message) {
    throw Error(ExitCode::invalid_input, fmt::format("{}: {}", echoed_path(source_of(node, file).str()),
                                                     printable(message, kLongestMessage)));
}

std::int64_t integer_in_range(const toml::node& node, const std::string& file, const std::string& what,
                              std::int64_t low, std::int64_t high) {
    const auto* integer = node.as_integer();
    if (integer && integer->get() >= low && integer->get() <= high) return integer->get();
    constexpr std::int64_t kMost = std::numeric_limits<std::int64_t>::max();
    const std::string range = high != kMost ? fmt::format("an integer from {} to {}", low, high)
                              : low == 1    ? std::string("a positive integer")
                                            : fmt::format("an integer of {} or more", low);
    throw_at(node, file,
             fmt::format("{} must be {}{}", what, range, integer ? fmt::format(", not {}", integer->get()) : ""));
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

std::optional<std::int64_t> TableReader::integer(const std::string& key, std::int64_t low, std::int64_t high) {
    const toml::node* n = table_.get(key);
    if (!n) return std::nullopt;
    return integer_in_range(*n, file_, fmt::format("'{}' in {}", key, where_), low, high);
}

std::optional<ComputeCapability> TableReader::capability(const std::string& key) {
    const auto text = string(key);
    if (!text) return std::nullopt;
    const auto cc = ComputeCapability::parse(*text);
    if (!cc)
        throw_at(*table_.get(key), file_,
                 fmt::format("'{}' in {} must be a compute capability like \"8.6\", not \"{}\"", key, where_,
                             echoed(*text)));
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
                     fmt::format("'{}.{}' in {} must be a string", key, echoed(name.str()),
                                 where_));
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
        std::string message = fmt::format("unknown key '{}' in {}", echoed(name), where_);
        if (!hint.empty()) message += fmt::format("; did you mean '{}'?", hint);
        else message += fmt::format("; known keys: {}", fmt::join(known, ", "));
        // The key's own position is more precise than the value's.
        const auto& region = key.source();
        if (region.begin.line != 0) {
            throw Error(ExitCode::invalid_input,
                        fmt::format("{}:{}:{}: {}", echoed_path(region.path ? *region.path : file_),
                                    region.begin.line, region.begin.column, printable(message, kLongestMessage)));
        }
        throw_at(value, file_, message);
    }
}

}  // namespace provision
