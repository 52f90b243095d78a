#include "report/report.h"

#include <ctime>

#include <algorithm>
#include <cmath>
#include <sstream>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "core/text.h"
#include "core/utf8.h"
#include "report/fabric_sections.h"
#include "report/network_sections.h"
#include "report/pod_sections.h"

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

// "float16 (recommended: ...)" / "bfloat16 (PROVISION_DTYPE from the environment; recommended: float16)"
std::string dtype_line(const DtypeChoice& dtype) {
    switch (dtype.user) {
        case DtypeOverride::none: return fmt::format("{} ({})", dtype.value, dtype.reason);
        case DtypeOverride::served:
            return fmt::format("{} (PROVISION_DTYPE from the environment; recommended: {})", dtype.value,
                               dtype.recommended);
        case DtypeOverride::forced:
            return fmt::format("{} (PROVISION_DTYPE forced by PROVISION_FORCE=1 although {}; recommended: {})",
                               dtype.value, dtype.problem, dtype.recommended);
        case DtypeOverride::unsupported:
        case DtypeOverride::failed_check: break;
    }
    return fmt::format("refused: PROVISION_DTYPE={} cannot be served: {} (set PROVISION_FORCE=1 to use it anyway; "
                       "recommended: {})",
                       dtype.user_value, dtype.problem, dtype.recommended);
}

// One line per number format: its state and the GPU that limits it.
std::string format_line(const FormatReport& format) {
    std::string text = fmt::format("{}: {}", format.name, to_string(format.state));
    if (format.state == FormatState::passed) {
        text += fmt::format(" on every visible GPU ({})", format.gpus.empty() ? std::string() : format.gpus.front().why);
    } else if (format.limiting_gpu >= 0) {
        text += fmt::format(", limited by {}", format.why);
    } else if (!format.why.empty()) {
        text += fmt::format(" ({})", format.why);
    }
    if (!format.gate_problems.empty())
        text += fmt::format("; off: {}", fmt::join(format.gate_problems, "; "));
    return text;
}

const char* environment_name(EnvironmentKind kind) {
    switch (kind) {
        case EnvironmentKind::venv: return "venv";
        case EnvironmentKind::conda: return "conda";
        case EnvironmentKind::system: return "system";
        case EnvironmentKind::none: break;
    }
    return "none";
}

// DESIGN.md's words for the JSON report.
const char* source_name(InterpreterSource source) {
    switch (source) {
        case InterpreterSource::option: return "option";
        case InterpreterSource::command: return "command";
        case InterpreterSource::virtual_env: return "VIRTUAL_ENV";
        case InterpreterSource::conda_prefix: return "CONDA_PREFIX";
        case InterpreterSource::path: return "PATH";
        case InterpreterSource::recipes: return "recipes";
        case InterpreterSource::site_packages: break;
    }
    return "site-packages";
}

// The same, for people.
const char* source_words(InterpreterSource source) {
    switch (source) {
        case InterpreterSource::option: return "given by --python / PROVISION_PYTHON";
        case InterpreterSource::command: return "the COMMAND's interpreter";
        case InterpreterSource::virtual_env: return "from VIRTUAL_ENV";
        case InterpreterSource::conda_prefix: return "from CONDA_PREFIX";
        case InterpreterSource::path: return "found on PATH";
        case InterpreterSource::recipes: return "none found; read the recipes' site-packages folders";
        case InterpreterSource::site_packages: break;
    }
    return "folders given by --site-packages";
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

std::string python_line(const WorkloadPython& python) {
    if (python.executable.empty()) return source_words(python.source);
    std::vector<std::string> facts{python.version ? python.version->str() : std::string("version unknown")};
    if (python.environment != EnvironmentKind::none) facts.push_back(environment_name(python.environment));
    facts.push_back(source_words(python.source));
    return fmt::format("{} ({})", python.executable, fmt::join(facts, ", "));
}

// "give /dev/shm 1 GiB or more; Docker: --shm-size=1g; Kubernetes: ...",
// "reset GPU 0 (nvidia-smi -r -i 0); fleet: COMPONENT_RESET".
std::string action_words(const Action& action) {
    std::string text = action.what;
    if (!action.docker.empty()) text += fmt::format("; Docker: {}", action.docker);
    if (!action.kubernetes.empty()) text += fmt::format("; Kubernetes: {}", action.kubernetes);
    if (action.actor == Actor::node) text += fmt::format("; fleet: {}", to_string(action.fleet));
    return text;
}

// The summary's last lines where the verdict is not ok: each action once,
// grouped by who acts.
std::string action_lines(const std::vector<Action>& actions, std::size_t longest) {
    std::string out;
    for (const Actor actor : {Actor::container, Actor::image, Actor::job, Actor::node}) {
        std::vector<std::string> seen;
        for (const Action& action : actions) {
            if (action.actor != actor || action.what.empty()) continue;
            std::string words = action_words(action);
            if (std::find(seen.begin(), seen.end(), words) != seen.end()) continue;
            out += fmt::format("    {}: {}\n", to_string(actor), printable(words, longest));
            seen.push_back(std::move(words));
        }
    }
    return out.empty() ? out : "  What to do, by who acts:\n" + out;
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

// Which mechanism would serve these GPUs best, and what keeps it out: the
// packages it needs, as selection found them (no command is offered: which
// index or build fits cannot be checked from here).
std::string best_line(const Candidate& best, const Report& report) {
    const std::string selected = report.decision.mechanism.empty()
                                     ? std::string("nothing is selected")
                                     : fmt::format("{} is selected instead", report.decision.mechanism);
    return fmt::format("{}, ahead in the '{}' workload's {} order: the GPUs and the driver can run it, but {}; {}",
                       best.mechanism, report.workload, report.decision.preference_key,
                       fmt::join(best.reasons, "; "), selected);
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

std::vector<Message> all_messages(const Report& report) {
    std::vector<Message> messages;
    add_messages(messages, Severity::warning, report.decision.warnings);
    add_messages(messages, Severity::note, report.inventory.notes);
    messages.insert(messages.end(), report.messages.begin(), report.messages.end());
    std::stable_sort(messages.begin(), messages.end(),
                     [](const Message& a, const Message& b) { return a.severity < b.severity; });
    return messages;
}

std::string render_summary(const Report& report, bool explain) {
    std::string out;
    // Every value may hold text from a GPU, a fixture, a recipe or the
    // environment: control characters are escaped, so nothing drives the
    // terminal, cuts the summary short (NUL) or forges a log line.
    constexpr std::size_t kLongest = 4096;
    auto line = [&](const std::string& label, const std::string& value) {
        out += fmt::format("  {:<20}{}\n", label + ":", printable(value, kLongest));
    };
    out += "==================== GPU Configuration Summary ====================\n";
    const auto& inventory = report.inventory;
    line("Driver", inventory.driver.present
                       ? fmt::format("{} (CUDA {})", inventory.driver.version, inventory.driver.cuda)
                       : std::string("none (no NVIDIA driver found)"));
    if (inventory.gpus.empty()) line("GPUs", "none visible: CPU only");
    for (const auto& gpu : inventory.gpus)
        line(fmt::format("GPU {}", gpu.index),
             fmt::format("{} ({}, compute capability {}, {} MiB){}", gpu.name, gpu.architecture,
                         gpu.compute_capability.str(), gpu.memory_mib, inventory.simulated() ? " [simulated]" : ""));
    if (inventory.hidden_gpus > 0)
        line("Hidden GPUs", fmt::format("{} (not in CUDA_VISIBLE_DEVICES)", inventory.hidden_gpus));
    line("Workload", report.workload);
    line("Python", python_line(report.python));
    line("Selected Mechanism", report.decision.mechanism.empty() ? std::string("none")
                                                                  : fmt::format("{} ({})", report.decision.mechanism,
                                                                                to_string(report.decision.source)));
    line("Reason", report.decision.reason);
    line("Dtype", dtype_line(report.formats.dtype));
    std::string validation(to_string(report.validation.status));
    if (!report.validation.reason.empty()) validation += fmt::format(" ({})", report.validation.reason);
    line("Validation", validation);
    for (const auto& check : report.validation.checks) {
        std::string text = fmt::format("GPU {} {}: {}", check.gpu, check.name, to_string(check.status));
        if (check.status == CheckStatus::passed || check.status == CheckStatus::failed)
            text += fmt::format(", max rel error {:.2e} (tolerance {:.2e}), {:.2f} ms", check.max_rel_error,
                                check.tolerance, check.ms);
        if (check.tflops > 0) text += fmt::format(", {:.0f} TFLOP/s", check.tflops);
        if (!check.detail.empty()) text += fmt::format(" — {}", check.detail);
        out += fmt::format("  {:<20}{}\n", "", printable(text, kLongest));
    }
    for (const BusyGpu& busy : report.validation.busy) {
        std::string text = fmt::format("GPU {} is busy, its checks not measured: {}", busy.gpu, busy.why);
        if (busy.proved_at) {
            const std::time_t at = static_cast<std::time_t>(*busy.proved_at);
            char stamp[32];
            std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&at));
            text += fmt::format("; its last proof ({}) stands", stamp);
        }
        out += fmt::format("  {:<20}{}\n", "", printable(text, kLongest));
    }
    if (!report.appended_arguments.empty())
        line("Arguments added", fmt::format("{}", fmt::join(report.appended_arguments, " ")));
    if (const std::string peer_access = peer_access_line(report.pod); !peer_access.empty())
        line("Peer access", peer_access);
    if (const std::string network = network_line(report.job, report.network); !network.empty())
        line("Network", network);
    if (const std::string fabric = fabric_line(report.fabric); !fabric.empty()) line("Fabric", fabric);
    line("Env file", report.env_file.empty() ? std::string("not written") : report.env_file);
    line("Verdict", std::string(to_string(report.verdict)));
    for (std::size_t i = 0; i < report.findings.size(); ++i) {
        const Finding& finding = report.findings[i];
        out += fmt::format("  health ({}): {}\n", to_string(finding.level), printable(finding.words, kLongest));
        if (explain && i < report.actions.size() && !report.actions[i].what.empty())
            out += fmt::format("    to do ({}): {}\n", to_string(report.actions[i].actor),
                               printable(action_words(report.actions[i]), kLongest));
    }
    for (const Message& message : all_messages(report))
        out += fmt::format("  {}: {}\n", to_string(message.severity), printable(message.text, kLongest));
    // With nothing selected a pod log must say why without --explain.
    if (explain || report.decision.mechanism.empty()) {
        out += fmt::format("  Candidates ({} order):\n", report.decision.preference_key);
        for (const auto& candidate : report.decision.candidates) {
            out += fmt::format("    {} {}\n", candidate.accepted ? "[accepted]" : "[rejected]", candidate.mechanism);
            for (const auto& reason : candidate.reasons)
                out += fmt::format("        - {}\n", printable(reason, kLongest));
        }
        if (const Candidate* best = best_not_served(report.decision))
            out += fmt::format("  Best for these GPUs: {}\n", printable(best_line(*best, report), kLongest));
    }
    if (explain) {
        out += "  Number formats:\n";
        for (const auto& format : report.formats.formats)
            out += fmt::format("    {}\n", printable(format_line(format), kLongest));
        out += explain_pod(inventory, report.pod);
        if (report.cudnn)
            out += fmt::format("  cuDNN torch loads: {} ({}; {})\n", printable(report.cudnn->version, kLongest),
                               printable(report.cudnn->evidence, kLongest), printable(report.cudnn->path, kLongest));
        if (report.network) out += explain_network(*report.network);
        out += explain_fabric(report.fabric);
        out += "  Python folders read:\n";
        if (report.python.site_packages.empty()) out += "    (none)\n";
        for (const auto& folder : report.python.site_packages)
            out += fmt::format("    {}\n", printable(folder, kLongest));
        for (const auto& package : report.native) {
            out += fmt::format("  Compiled code of {}:\n",
                               printable(fmt::format("{} {}", package.package, package.version), kLongest));
            for (const auto& detail : package.details) out += fmt::format("    {}\n", printable(detail, kLongest));
        }
        // In time order: the phases overlap (the GPUs' workers open them
        // while the recipes and the Python are read), so their ends are
        // marked out of the order Phase lists them in.
        std::vector<PhaseTiming> ended = report.timings.phases();
        std::stable_sort(ended.begin(), ended.end(),
                         [](const PhaseTiming& a, const PhaseTiming& b) { return a.ms < b.ms; });
        std::string phases;
        for (const auto& [phase, ms] : ended)
            phases += fmt::format("{}{} {:.1f}", phases.empty() ? "" : ", ", to_string(phase), ms);
        out += fmt::format("  Timings (ms since start): {}\n", phases.empty() ? "none" : phases);
        if (const GpuTiming* slowest = report.timings.slowest_gpu())
            out += fmt::format("  Slowest GPU: GPU {} (its worker started {:.1f}{}, ready {:.1f}{}; {} GPU worker{})\n",
                               slowest->gpu, slowest->started,
                               slowest->running ? fmt::format(", running {:.1f}", *slowest->running) : std::string(),
                               *slowest->ready,
                               slowest->done ? fmt::format(", done {:.1f}", *slowest->done) : std::string(),
                               report.timings.gpus().size(), report.timings.gpus().size() == 1 ? "" : "s");
        out += "  Env settings:\n";
        for (const auto& [name, value] : report.env.entries())
            out += fmt::format("    {}={}{}\n", name, printable(value, kLongest),
                               report.env.is_kept(name) ? " (kept from the environment)" : "");
    }
    if (report.verdict != HealthLevel::ok) out += action_lines(report.actions, kLongest);
    out += "===================================================================\n";
    return out;
}

}  // namespace provision
