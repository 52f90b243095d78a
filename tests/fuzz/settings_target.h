// Fuzz target: the settings table's decoding (src/app/settings.h), from
// environment variables a pod spec sets.  Each input line is NAME=VALUE, an
// environment variable, or --FLAG=VALUE, a flag as the command line gave it.
// Beyond "no crash, no sanitizer report": decoding either succeeds or throws
// Error(usage) whose message is one printable line of bounded size, and what
// it decodes stays within the settings' bounds.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <string_view>

#include "app/settings.h"
#include "core/error.h"
#include "fuzz/fuzz_support.h"

namespace fuzz::settings {

inline void one_input(std::string_view input) {
    std::map<std::string, std::string> environment;
    provision::GivenFlags flags;
    while (!input.empty()) {
        const std::size_t end = std::min(input.find('\n'), input.size());
        const std::string_view line = input.substr(0, end);
        input.remove_prefix(std::min(end + 1, input.size()));
        const std::size_t equals = line.find('=');
        if (equals == std::string_view::npos) continue;
        const std::string name(line.substr(0, equals)), value(line.substr(equals + 1));
        if (name.starts_with("--"))
            flags[name].push_back(value);
        else
            environment[name] = value;
    }
    provision::Options options;
    try {
        provision::decode_outputs(flags, environment, options);
        provision::decode_settings(flags, environment, options);
    } catch (const provision::Error& error) {
        FUZZ_CHECK(error.code() == provision::ExitCode::usage);
        const std::string_view message = error.what();
        FUZZ_CHECK(message.size() > 0);
        // Whatever value it echoes, a refusal is one line of printable text
        // of bounded size (the value cut to 64 bytes: core/text.h, Echoed).
        for (const char c : message) FUZZ_CHECK(static_cast<unsigned char>(c) >= 0x20 && c != 0x7F);
        FUZZ_CHECK(message.size() < 1024);
        return;
    }
    using std::chrono::milliseconds;
    FUZZ_CHECK(options.detect.time_limit >= milliseconds(1) && options.detect.time_limit <= milliseconds(3'600'000));
    FUZZ_CHECK(options.validate_timeout_s >= 0.001 && options.validate_timeout_s <= 3600);
    FUZZ_CHECK(options.fetch.total_timeout_ms >= 1 && options.fetch.total_timeout_ms <= 3'600'000);
    FUZZ_CHECK(options.worker_processes >= 1 && options.worker_processes <= 64);
    if (options.repeat_interval)
        FUZZ_CHECK(*options.repeat_interval >= milliseconds(1) && *options.repeat_interval <= milliseconds(86'400'000));
    FUZZ_CHECK(!options.detect.nvml_library.empty() && !options.detect.cuda_library.empty());
    FUZZ_CHECK(!options.curl_library.empty());
    FUZZ_CHECK(!options.env_file.empty());
    // The variable's list drops empty items; the flag refuses an empty one;
    // a path is never empty (app/settings.h, SettingShape::path).
    for (const auto& item : options.site_packages) FUZZ_CHECK(!item.empty());
    for (const auto& item : options.recipes) FUZZ_CHECK(!item.empty());
    if (flags.count("--python") > 0 || environment.count("PROVISION_PYTHON") > 0) FUZZ_CHECK(!options.python.empty());
}

}  // namespace fuzz::settings
