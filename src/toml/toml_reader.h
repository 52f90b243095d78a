// Typed, position-aware reading of one TOML table against a known schema.
// Every error names the file, line and column; unknown keys suggest the
// closest known one.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "core/compute_capability.h"
#include "core/source_ref.h"

namespace provision {

SourceRef source_of(const toml::node& node, const std::string& fallback_file);

// Parses a TOML document; a syntax error is Error(invalid_input) as
// "source:line:column: what".  `source` names it in messages (a path).
toml::table parse_toml(std::string_view text, const std::string& source);

// Throws Error(invalid_input) as "file:line:column: message".  Each value a
// message echoes is echoed(value) where the message
// is made; here the whole message goes through printable() once more, so no
// control character of the input reaches a terminal or a log line raw.
[[noreturn]] void throw_at(const toml::node& node, const std::string& file, const std::string& message);

// The integer at `node`, from `low` to `high`: every integer a recipe or a
// fixture gives is read through here, so a value that does not fit the
// field it fills is an error at its file:line:column, never wrapped or cut.
// `what` names it in the message ("'nvlinks' in [[gpus]] entry 1").
std::int64_t integer_in_range(const toml::node& node, const std::string& file, const std::string& what,
                              std::int64_t low, std::int64_t high);

class TableReader {
public:
    // `where` names the table in messages, e.g. "[mechanisms.flash2]".
    TableReader(const toml::table& table, std::string file, std::string where);

    std::optional<std::string> string(const std::string& key);
    std::optional<std::vector<std::string>> string_array(const std::string& key);
    std::optional<ComputeCapability> capability(const std::string& key);
    // integer_in_range() of the key's value; nullopt when the key is absent.
    std::optional<std::int64_t> integer(const std::string& key, std::int64_t low, std::int64_t high);
    std::optional<std::map<std::string, std::string>> string_map(const std::string& key);
    const toml::table* table(const std::string& key);
    const toml::node* node(const std::string& key);

    // Rejects every key that was not read, suggesting the closest read one.
    void reject_unknown_keys(const std::vector<std::string>& known) const;

    const std::string& file() const { return file_; }
    const std::string& where() const { return where_; }
    const toml::table& raw() const { return table_; }

private:
    const toml::table& table_;
    std::string file_;
    std::string where_;
};

}  // namespace provision
