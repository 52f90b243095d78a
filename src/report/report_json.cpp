// The JSON report (docs/DESIGN.md, "The JSON report"): the report's sections
// as a toml++ table, written as JSON.
#include "report/report.h"

#include <cmath>
#include <sstream>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "core/utf8.h"
#include "report/fabric_sections.h"
#include "report/network_sections.h"
#include "report/pod_sections.h"
#include "report/python_words.h"

namespace provision {
namespace {

// JSON has no NaN or infinity: such a number is written as a string.
void put_number(toml::table& table, const std::string& key, double value) {
    if (std::isfinite(value)) table.insert_or_assign(key, value);
    else table.insert_or_assign(key, fmt::format("{}", value));
}

toml::array string_array(const std::vector<std::string>& values) {
    toml::array array;
    for (const auto& value : values) array.push_back(value);
    return array;
}

toml::table link_errors_table(const LinkErrorCounts& counts) {
    toml::table table;
    for (const auto& [name, count] : counts.named())
        table.insert_or_assign(name, static_cast<std::int64_t>(std::min<std::uint64_t>(count, INT64_MAX)));
    return table;
}

// The signals NVML could read; one it could not is left out.
toml::table health_table(const GpuHealth& health) {
    toml::table table;
    auto put_flag = [&](const char* key, const std::optional<bool>& value) {
        if (value) table.insert_or_assign(key, *value);
    };
    auto put_count = [&](const char* key, const auto& value) {
        if (value) table.insert_or_assign(key, static_cast<std::int64_t>(*value));
    };
    put_count("uncorrected_ecc_errors", health.uncorrected_ecc_errors);
    put_flag("retired_pages_pending", health.retired_pages_pending);
    put_flag("row_remap_pending", health.row_remap_pending);
    put_flag("row_remap_failure", health.row_remap_failure);
    put_flag("thermal_slowdown", health.thermal_slowdown);
    put_flag("power_brake_slowdown", health.power_brake_slowdown);
    put_flag("hw_slowdown", health.hw_slowdown);
    put_count("memory_used_mib", health.memory_used_mib);
    put_count("other_processes", health.other_processes);
    put_flag("mig_mode", health.mig_mode);
    if (health.compute_mode) table.insert_or_assign("compute_mode", std::string(to_string(*health.compute_mode)));
    if (health.recovery_action)
        table.insert_or_assign("recovery_action", std::string(to_string(*health.recovery_action)));
    put_count("retired_pages", health.retired_pages);
    put_count("uncorrectable_remapped_rows", health.uncorrectable_remapped_rows);
    if (health.link_errors.any()) table.insert_or_assign("link_errors", link_errors_table(health.link_errors));
    if (health.xids) {
        toml::array xids;
        for (const XidEvent& event : *health.xids)
            xids.push_back(toml::table{{"xid", static_cast<std::int64_t>(event.xid)}, {"message", event.message}});
        table.insert_or_assign("xids", std::move(xids));
    } else {
        table.insert_or_assign("xids", "not-read");  // never "none": the kernel's log could not be read
    }
    return table;
}

toml::array native_array(const std::vector<NativePackageReport>& packages) {
    toml::array array;
    for (const auto& package : packages) {
        toml::table entry;
        entry.insert_or_assign("package", package.package);
        entry.insert_or_assign("version", package.version);
        entry.insert_or_assign("cuda", package.cuda);
        entry.insert_or_assign("sass", string_array(package.sass));
        entry.insert_or_assign("ptx", string_array(package.ptx));
        toml::array gpus;
        for (const auto& gpu : package.gpus)
            gpus.push_back(toml::table{{"gpu", gpu.gpu}, {"runs", std::string(native::to_string(gpu.runs))}});
        entry.insert_or_assign("gpus", std::move(gpus));
        entry.insert_or_assign("verified", package.verified);
        array.push_back(std::move(entry));
    }
    return array;
}

toml::table action_table(const Action& action) {
    toml::table table{{"actor", std::string(to_string(action.actor))}, {"fleet", std::string(to_string(action.fleet))}};
    if (!action.what.empty()) table.insert_or_assign("what", action.what);
    if (!action.docker.empty()) table.insert_or_assign("docker", action.docker);
    if (!action.kubernetes.empty()) table.insert_or_assign("kubernetes", action.kubernetes);
    return table;
}

toml::array findings_array(const std::vector<Finding>& findings, const std::vector<Action>& actions) {
    toml::array array;
    for (std::size_t i = 0; i < findings.size(); ++i) {
        const Finding& finding = findings[i];
        toml::table entry;
        if (finding.gpu >= 0) entry.insert_or_assign("gpu", finding.gpu);
        if (finding.nvml_index >= 0) entry.insert_or_assign("nvml_index", finding.nvml_index);
        entry.insert_or_assign("signal", finding.signal);
        entry.insert_or_assign("level", std::string(to_string(finding.level)));
        entry.insert_or_assign("message", finding.words);
        if (i < actions.size()) entry.insert_or_assign("action", action_table(actions[i]));
        array.push_back(std::move(entry));
    }
    return array;
}

// {"recommended": "bfloat16", "bf16": "passed", ...}: each number format's
// state, the worst over the visible GPUs.
toml::table formats_table(const FormatsDecision& formats) {
    toml::table table;
    table.insert_or_assign("recommended", formats.dtype.recommended);
    for (const auto& format : formats.formats) table.insert_or_assign(format.name, std::string(to_string(format.state)));
    return table;
}

toml::table python_table(const WorkloadPython& python) {
    toml::table table;
    table.insert_or_assign("executable", python.executable);
    table.insert_or_assign("version", python.version ? python.version->str() : std::string());
    table.insert_or_assign("environment", environment_name(python.environment));
    table.insert_or_assign("source", source_name(python.source));
    table.insert_or_assign("site_packages", string_array(python.site_packages));
    return table;
}

// Every string valid UTF-8 (invalid bytes as U+FFFD), before the writer
// sees them.
void make_strings_valid(toml::node& node) {
    if (toml::table* table = node.as_table()) {
        for (auto&& [key, value] : *table) make_strings_valid(value);
    } else if (toml::array* array = node.as_array()) {
        for (toml::node& value : *array) make_strings_valid(value);
    } else if (toml::value<std::string>* text = node.as_string()) {
        text->get() = valid_utf8(text->get());
    }
}

// toml++'s JSON writer escapes a code point beyond U+FFFF as "\UXXXXXXXX"
// (TOML's form, not JSON's): each becomes the raw UTF-8 character.  Other
// escapes ("\\", "\"", "\u001B") are JSON already and pass through.  A bare
// NaN outside strings (put_json_null's; every other number is finite or
// written as a string) becomes null.  As one line, the writer's line breaks
// go (a string never holds a raw one: JSON escapes it).
std::string as_json_text(const toml::table& root, JsonLayout layout) {
    std::ostringstream formatted;
    formatted << toml::json_formatter{root, layout == JsonLayout::line ? toml::format_flags::terse_key_value_pairs
                                                                        : toml::format_flags::none};
    const std::string text = formatted.str();
    std::string out;
    out.reserve(text.size() + 1);
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '"') in_string = !in_string;
        if (!in_string && text.compare(i, 3, "NaN") == 0) {
            out += "null";
            i += 2;
            continue;
        }
        if (text[i] == '\n' && layout == JsonLayout::line) continue;
        if (text[i] != '\\' || i + 1 >= text.size()) {
            out += text[i];
            continue;
        }
        if (text[i + 1] == 'U' && i + 10 <= text.size()) {
            append_utf8(out, static_cast<char32_t>(std::stoul(text.substr(i + 2, 8), nullptr, 16)));
            i += 9;
            continue;
        }
        out += text[i];
        out += text[++i];
    }
    return out + "\n";
}

}  // namespace

std::string render_json_error(int exit_code, const std::string& message) {
    toml::table error{{"exit_code", exit_code}, {"message", message}};
    toml::table root{{"schema", 1}, {"error", std::move(error)}};
    make_strings_valid(root);
    return as_json_text(root, JsonLayout::line);
}

std::string render_json_recipes(const std::string& folder, const std::vector<std::string>& files) {
    toml::array written;
    for (const auto& file : files) written.push_back(file);
    toml::table recipes{{"folder", folder}, {"files", std::move(written)}};
    toml::table root{{"schema", 1}, {"recipes", std::move(recipes)}};
    make_strings_valid(root);
    return as_json_text(root, JsonLayout::line);
}

std::string render_json(const Report& report, JsonLayout layout) {
    toml::table root;
    root.insert_or_assign("schema", 1);
    toml::table driver;
    if (report.inventory.driver.present) {
        driver.insert_or_assign("version", report.inventory.driver.version);
        driver.insert_or_assign("cuda", report.inventory.driver.cuda);
    }
    // Why each GPU's "xids" reads "not-read", where the log was tried.
    if (!report.inventory.kernel_log_unread.empty())
        driver.insert_or_assign("kernel_log_unread", report.inventory.kernel_log_unread);
    if (report.inventory.xid_events_since)
        driver.insert_or_assign("xid_events_since", *report.inventory.xid_events_since);
    root.insert_or_assign("driver", std::move(driver));
    toml::array gpus;
    for (const auto& gpu : report.inventory.gpus) {
        toml::table entry;
        entry.insert_or_assign("index", gpu.index);
        entry.insert_or_assign("name", gpu.name);
        entry.insert_or_assign("uuid", gpu.uuid);
        entry.insert_or_assign("compute_capability", gpu.compute_capability.str());
        entry.insert_or_assign("architecture", gpu.architecture);
        entry.insert_or_assign("family", gpu.family);
        entry.insert_or_assign("memory_mib", static_cast<std::int64_t>(gpu.memory_mib));
        toml::table health = health_table(gpu.health);
        const auto& after = report.pod.link_errors_after;
        if (static_cast<std::size_t>(gpu.index) < after.size() && after[static_cast<std::size_t>(gpu.index)])
            health.insert_or_assign("link_errors_after_copies",
                                    link_errors_table(*after[static_cast<std::size_t>(gpu.index)]));
        entry.insert_or_assign("health", std::move(health));
        add_gpu_links(entry, gpu, report.pod);
        add_gpu_fabric_and_memory(entry, gpu, report.pod);
        gpus.push_back(std::move(entry));
    }
    root.insert_or_assign("gpus", std::move(gpus));
    root.insert_or_assign("links", links_array(report.pod));
    toml::table container = container_table(report.pod.container);
    add_host_facts(container, report.pod.host);
    root.insert_or_assign("container", std::move(container));
    if (auto nccl = nccl_table(report.pod)) root.insert_or_assign("nccl", std::move(*nccl));
    root.insert_or_assign("job", job_table(report.job));
    if (report.network) root.insert_or_assign("network", network_table(*report.network));
    if (report.fabric.ran) root.insert_or_assign("fabric", fabric_table(report.fabric));
    root.insert_or_assign("simulated", report.inventory.simulated());
    root.insert_or_assign("workload", report.workload);
    root.insert_or_assign("python", python_table(report.python));
    if (report.cudnn) {
        toml::table cudnn;
        cudnn.insert_or_assign("version", report.cudnn->version);
        cudnn.insert_or_assign("evidence", report.cudnn->evidence);
        cudnn.insert_or_assign("path", report.cudnn->path);
        root.insert_or_assign("cudnn", std::move(cudnn));
    }
    root.insert_or_assign("native", native_array(report.native));

    toml::table selected;
    selected.insert_or_assign("mechanism", report.decision.mechanism);
    selected.insert_or_assign("source", std::string(to_string(report.decision.source)));
    selected.insert_or_assign("reason", report.decision.reason);
    selected.insert_or_assign("preference", report.decision.preference_key);
    root.insert_or_assign("selected", std::move(selected));

    toml::array candidates;
    for (const auto& candidate : report.decision.candidates) {
        toml::table entry;
        entry.insert_or_assign("mechanism", candidate.mechanism);
        entry.insert_or_assign("accepted", candidate.accepted);
        entry.insert_or_assign("reasons", string_array(candidate.reasons));
        candidates.push_back(std::move(entry));
    }
    root.insert_or_assign("candidates", std::move(candidates));
    root.insert_or_assign("formats", formats_table(report.formats));

    toml::table env;
    for (const auto& [name, value] : report.env.entries()) env.insert_or_assign(name, value);
    root.insert_or_assign("env", std::move(env));
    root.insert_or_assign("env_file", report.env_file);
    root.insert_or_assign("arguments", string_array(report.appended_arguments));

    toml::table validation;
    validation.insert_or_assign("status", std::string(to_string(report.validation.status)));
    if (!report.validation.reason.empty()) validation.insert_or_assign("reason", report.validation.reason);
    put_number(validation, "ms", report.validation.wall_ms);
    toml::array checks;
    for (const auto& check : report.validation.checks) {
        toml::table entry;
        entry.insert_or_assign("gpu", check.gpu);
        entry.insert_or_assign("name", check.name);
        entry.insert_or_assign("status", std::string(to_string(check.status)));
        put_number(entry, "max_rel_error", check.max_rel_error);
        put_number(entry, "tolerance", check.tolerance);
        put_number(entry, "ms", check.ms);
        if (check.tflops > 0) put_number(entry, "tflops", check.tflops);
        if (!check.detail.empty()) entry.insert_or_assign("detail", check.detail);
        checks.push_back(std::move(entry));
    }
    validation.insert_or_assign("checks", std::move(checks));
    if (!report.validation.busy.empty()) {
        toml::array busy;
        for (const BusyGpu& gpu : report.validation.busy) {
            toml::table entry{{"gpu", gpu.gpu}, {"reason", gpu.why}};
            if (gpu.proved_at) entry.insert_or_assign("proved_at", *gpu.proved_at);
            busy.push_back(std::move(entry));
        }
        validation.insert_or_assign("busy", std::move(busy));
    }
    toml::array proofs;
    for (const GpuProof& proof : report.validation.proofs) proofs.push_back(toml::table{{"gpu", proof.gpu}, {"at", proof.at}});
    validation.insert_or_assign("proofs", std::move(proofs));
    root.insert_or_assign("validation", std::move(validation));

    // "messages" with their severity; "warnings" their texts alone, as
    // schema 1 has always had them.
    toml::array messages, warnings;
    for (const Message& message : all_messages(report)) {
        messages.push_back(toml::table{{"severity", std::string(to_string(message.severity))}, {"text", message.text}});
        warnings.push_back(message.text);
    }
    root.insert_or_assign("messages", std::move(messages));
    root.insert_or_assign("warnings", std::move(warnings));
    root.insert_or_assign("findings", findings_array(report.findings, report.actions));
    root.insert_or_assign("verdict", std::string(to_string(report.verdict)));
    toml::table timings;
    for (const auto& [phase, ms] : report.timings.phases()) put_number(timings, std::string(to_string(phase)), ms);
    if (!report.timings.gpus().empty()) {
        toml::array gpus;
        for (const GpuTiming& gpu : report.timings.gpus()) {
            toml::table entry;
            entry.insert_or_assign("gpu", gpu.gpu);
            put_number(entry, "started", gpu.started);
            if (gpu.running) put_number(entry, "running", *gpu.running);
            if (gpu.ready) put_number(entry, "ready", *gpu.ready);
            if (gpu.done) put_number(entry, "done", *gpu.done);
            gpus.push_back(std::move(entry));
        }
        timings.insert_or_assign("gpus", std::move(gpus));
    }
    root.insert_or_assign("timings", std::move(timings));

    make_strings_valid(root);
    return as_json_text(root, layout);
}

}  // namespace provision
