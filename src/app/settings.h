// Every setting provision reads, in one table: the flag, the environment
// variable that stands in for it, the help line and the typed field of
// Options it fills.  The command line (command_line.cpp), the variables' fallback,
// --help and the README's option tables all come from it (a test compares the
// README with it), so a setting is named once and decoded once, before any
// work starts: nothing below app/ reads the environment for a setting.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "app/options.h"

namespace provision {

// What a setting takes.  Two rules hold for every setting, in decode():
// a switch's flag takes no value (--json=false, --allow-http=no are usage
// errors naming the flag: only its variable reads a value), and a setting
// that names a path (a file, a folder, an interpreter) refuses an empty
// value as --env-file always has, from its flag or its variable alike; any
// other setting reads an empty value as unset.
enum class SettingShape {
    switch_flag,  // --flag alone; its variable takes 1/0, true/false, yes/no, on/off
    value,        // --flag VALUE; the variable's text is the value
    path,         // --flag PATH; as value, but an empty one is a usage error
    repeatable,   // --flag PATH, again and again (none empty); the variable holds a list
};

// What one setting was given: the flag's values, or its variable's text.
struct SettingValue {
    std::vector<std::string> words;  // a switch given as a flag has none
    std::string source;              // "--workload" or "PROVISION_WORKLOAD", for messages
    bool from_flag = false;
};

// Fills the setting's field of Options; throws Error(usage) for a bad value.
using SettingDecoder = void (*)(const SettingValue&, Options&);

// The table's rows give the leading fields they need; each field has its
// default, so a row that stops early leaves the rest as here.
struct Setting {
    std::string_view flag{};           // "--workload"; empty: a variable alone
    std::string_view variable{};       // "PROVISION_WORKLOAD"; empty: a flag alone
    std::string_view value_name{};     // "NAME" in --help; empty for a switch
    std::string_view help{};           // one line for --help
    SettingShape shape = SettingShape::value;
    SettingDecoder decode = nullptr;   // null: read where it is used, as the workload reads it
    std::string_view variable_form{};  // how the variable writes it, when not as the flag ("colon-separated")
    std::string_view unless_flag{};    // the variable is not read when this flag is given
    bool names_output = false;         // a file the run writes: decoded first (see decode_outputs)
    std::vector<std::string> choices{};  // the flag's only values (any case); any other is a usage error
    bool test_hook = false;            // a test build's hook: absent from release builds, and from --help and README
    // Whose variable it is where not provision's own ("CUDA", "Python",
    // "launcher", "NCCL", "pyenv", "system"): provision reads it as its owner
    // reads it in the workload, and never gives it a meaning of its own.
    // --help and the README list these apart from provision's settings.
    std::string_view owner{};
};

// The table: every setting, and in fault-injection builds the test hooks
// (PROVISION_TEST_*) after them.
const std::vector<Setting>& settings();

// The flags the command line gave: each flag's values in order (a switch:
// none, unless the command line gave it one with '=').  Flags not given are
// absent.
using GivenFlags = std::map<std::string, std::vector<std::string>, std::less<>>;

// Whether `setting` was given, by its flag or by its variable.
bool setting_given(const Setting& setting, const GivenFlags& flags, const std::map<std::string, std::string>& environment);

// The settings that name a file the run writes (the env file, --node-labels,
// --metrics), decoded before anything else so that a usage error found later
// still knows where an earlier run published; then every other one.  A flag
// wins over its variable.
void decode_outputs(const GivenFlags& flags, const std::map<std::string, std::string>& environment, Options& options);
void decode_settings(const GivenFlags& flags, const std::map<std::string, std::string>& environment, Options& options);

// Holds every other given value to the rules all values share (a switch takes
// none, a path is never empty, a flag with choices takes one) right after the
// outputs are known: a refused value is the first error, before the outputs
// are compared or anything else is decoded.
void check_setting_values(const GivenFlags& flags, const std::map<std::string, std::string>& environment);

// One setting alone, named by its flag or its variable (for --version, which
// is answered whatever else the settings hold).
void decode_setting(std::string_view name, const GivenFlags& flags, const std::map<std::string, std::string>& environment,
                    Options& options);

// A flag's line in --help: its help, then "[env: VARIABLE, form]".
std::string flag_help(const Setting& setting);

// The --help sections: provision's own environment variables, then those of
// others it reads, one line each.
std::string environment_help();

}  // namespace provision
