#include "validate/worker_protocol.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <sstream>

namespace provision {
namespace {

std::string one_line(const toml::table& document) {
    std::ostringstream out;
    // No literal or multi-line strings: every escape stays on the one line.
    out << toml::toml_formatter(document, toml::format_flags::none);
    return out.str();
}

toml::table inline_table(toml::table fields) {
    fields.is_inline(true);  // inline tables are written on one line
    return fields;
}

std::int64_t nanoseconds(MonotonicTime at) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(at.time_since_epoch()).count();
}

MonotonicTime time_from(std::int64_t ns) {
    return MonotonicTime(std::chrono::duration_cast<MonotonicTime::duration>(std::chrono::nanoseconds(ns)));
}

std::optional<CheckOutcome> result_from(const toml::table& fields) {
    const auto name = fields["name"].value<std::string>();
    const auto status = fields["status"].value<std::string>();
    if (!name || !status) return std::nullopt;
    CheckOutcome result{};
    result.name = *name;
    result.max_rel_error = fields["max_rel_error"].value_or(0.0);
    result.tolerance = fields["tolerance"].value_or(0.0);
    result.ms = fields["ms"].value_or(0.0);
    result.tflops = fields["tflops"].value_or(0.0);
    result.detail = fields["detail"].value_or(std::string());
    // A worker reports passed, failed, unsupported or error.
    const auto known = parse_check_status(*status);
    if (known && *known != CheckStatus::timeout) {
        result.status = *known;
    } else {
        result.status = CheckStatus::error;
        result.detail = fmt::format("the worker reported an unknown status {}", quoted(*status));
    }
    return result;
}

std::optional<toml::table> parse_line(const std::string& line) {
    try {
        return toml::parse(line);
    } catch (const toml::parse_error&) {
        return std::nullopt;
    }
}

}  // namespace

std::vector<std::string> worker_arguments(int cuda_device, const ValidationOptions& options) {
    std::vector<std::string> args = {"__check-worker", "--gpu", std::to_string(cuda_device), "--mode",
                                     std::string(to_string(options.mode))};
    if (!options.fault.empty()) {
        args.push_back("--fault");
        args.push_back(options.fault);
    }
    if (options.simulate) args.push_back("--simulate");
    return args;
}

std::string format_check_list(const std::vector<std::string>& checks) {
    std::string text;
    for (const auto& check : checks) text += check + "\n";
    return text + "\n";
}

std::string format_ready_line(const WorkerReady& ready) {
    toml::table fields{{"at_ns", nanoseconds(ready.at)}, {"open_ms", ready.open_ms}};
    if (!ready.uuid.empty()) fields.insert("uuid", ready.uuid);
    if (!ready.capability.empty()) fields.insert("capability", ready.capability);
    if (!ready.error.empty()) fields.insert("error", ready.error);
    return one_line(toml::table{{"ready", inline_table(std::move(fields))}});
}

std::string format_done_line(MonotonicTime at, double waited_ms) {
    return one_line(toml::table{{"done", inline_table(toml::table{{"at_ns", nanoseconds(at)}, {"waited_ms", waited_ms}})}});
}

std::string format_result_line(const CheckOutcome& result) {
    toml::table fields{{"name", result.name},
                       {"status", std::string(to_string(result.status))},
                       {"max_rel_error", result.max_rel_error},
                       {"tolerance", result.tolerance},
                       {"ms", result.ms},
                       {"tflops", result.tflops},
                       {"detail", result.detail}};
    return one_line(toml::table{{"result", inline_table(std::move(fields))}});
}

std::optional<CheckOutcome> parse_result_line(const std::string& line) {
    const auto document = parse_line(line);
    if (!document) return std::nullopt;
    const toml::table* fields = (*document)["result"].as_table();
    return fields ? result_from(*fields) : std::nullopt;
}

WorkerOutput parse_worker_output(const std::string& text) {
    WorkerOutput output;
    std::size_t start = 0;
    for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1) {
        const std::string line = text.substr(start, end - start);
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        const auto document = parse_line(line);
        if (const toml::table* fields = document ? (*document)["result"].as_table() : nullptr) {
            if (auto result = result_from(*fields)) {
                output.results.insert_or_assign(result->name, std::move(*result));
                continue;
            }
        } else if (const toml::table* ready = document ? (*document)["ready"].as_table() : nullptr) {
            WorkerReady fields;
            fields.at = time_from((*ready)["at_ns"].value_or(std::int64_t{0}));
            fields.open_ms = (*ready)["open_ms"].value_or(0.0);
            fields.uuid = (*ready)["uuid"].value_or(std::string());
            fields.capability = (*ready)["capability"].value_or(std::string());
            fields.error = (*ready)["error"].value_or(std::string());
            output.ready = std::move(fields);
            continue;
        } else if (const toml::table* done = document ? (*document)["done"].as_table() : nullptr) {
            output.done = time_from((*done)["at_ns"].value_or(std::int64_t{0}));
            continue;
        }
        if (output.unparsed.empty()) output.unparsed = line;
    }
    return output;
}

std::string fault_for_check(const std::string& spec, const std::string& check) {
    std::istringstream entries(spec);
    for (std::string entry; std::getline(entries, entry, ',');) {
        const auto equals = entry.find('=');
        if (equals == std::string::npos) continue;
        const std::string pattern = entry.substr(0, equals);
        if (pattern == "*" || pattern == check) return entry.substr(equals + 1);
    }
    return {};
}

constexpr std::size_t kQuoteLimit = 200;

std::string quoted(std::string text) {
    if (text.size() > kQuoteLimit) text = text.substr(0, kQuoteLimit) + "...";
    return fmt::format("'{}'", text);
}

}  // namespace provision
