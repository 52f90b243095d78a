#include "validate/worker_protocol.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <sstream>

namespace provision {

std::vector<std::string> worker_arguments(const GpuChecks& job, const ValidationOptions& options) {
    std::vector<std::string> args = {"__check-worker", "--gpu", std::to_string(job.gpu), "--mode",
                                     std::string(to_string(options.mode))};
    if (!options.fault.empty()) {
        args.push_back("--fault");
        args.push_back(options.fault);
    }
    args.push_back("--");
    args.insert(args.end(), job.checks.begin(), job.checks.end());
    return args;
}

std::string format_result_line(const CheckOutcome& result) {
    toml::table fields{{"name", result.name},
                       {"status", std::string(to_string(result.status))},
                       {"max_rel_error", result.max_rel_error},
                       {"tolerance", result.tolerance},
                       {"ms", result.ms},
                       {"tflops", result.tflops},
                       {"detail", result.detail}};
    fields.is_inline(true);  // inline tables are written on one line
    const toml::table document{{"result", std::move(fields)}};
    std::ostringstream out;
    // No literal or multi-line strings: every escape stays on the one line.
    out << toml::toml_formatter(document, toml::format_flags::none);
    return out.str();
}

std::optional<CheckOutcome> parse_result_line(const std::string& line) {
    toml::table document;
    try {
        document = toml::parse(line);
    } catch (const toml::parse_error&) {
        return std::nullopt;
    }
    const toml::table* fields = document["result"].as_table();
    if (!fields) return std::nullopt;
    const auto name = (*fields)["name"].value<std::string>();
    const auto status = (*fields)["status"].value<std::string>();
    if (!name || !status) return std::nullopt;
    CheckOutcome result{};
    result.name = *name;
    result.max_rel_error = (*fields)["max_rel_error"].value_or(0.0);
    result.tolerance = (*fields)["tolerance"].value_or(0.0);
    result.ms = (*fields)["ms"].value_or(0.0);
    result.tflops = (*fields)["tflops"].value_or(0.0);
    result.detail = (*fields)["detail"].value_or(std::string());
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

WorkerOutput parse_worker_output(const std::string& text) {
    WorkerOutput output;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
        if (auto result = parse_result_line(line))
            output.results.insert_or_assign(result->name, std::move(*result));
        else if (output.unparsed.empty())
            output.unparsed = line;
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
