// The summary a person reads on stderr, and every message of a run with its
// severity, most severe first.
#include "report/report.h"

#include <algorithm>
#include <ctime>

#include <fmt/format.h>

#include "core/text.h"
#include "report/fabric_sections.h"
#include "report/network_sections.h"
#include "report/pod_sections.h"
#include "report/python_words.h"

namespace provision {
namespace {

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
