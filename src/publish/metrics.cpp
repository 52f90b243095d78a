#include "publish/metrics.h"

#include "formats/format_state.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/utf8.h"
#include "publish/node_facts.h"

namespace provision {
namespace {

using Labels = std::vector<std::pair<std::string, std::string>>;

struct Sample {
    Labels labels;
    double value = 0;
};
using Samples = std::vector<Sample>;

enum class MetricType { gauge, counter };

// One family of metrics; a new fact is one more row.
struct MetricFamily {
    std::string_view name;
    MetricType type;
    std::string_view help;
    bool needs_report;  // false: also written by a run that stopped before its report
    void (*samples)(const PublishedRun& run, Samples& out);
};

// One sample per state, 1 for the current one and 0 for the others (a
// state set), so a query can tell "not ok" from "not reported".
template <typename State, typename States>
void state_set(Samples& out, const Labels& labels, const std::string& label, const States& states, State current) {
    for (const auto& state : states) {
        Labels with = labels;
        with.emplace_back(label, std::string(to_string(state)));
        out.push_back({with, state == current ? 1.0 : 0.0});
    }
}

const std::vector<HealthLevel> kLevels = {HealthLevel::ok, HealthLevel::degraded, HealthLevel::failed};
const std::vector<ValidationStatus> kValidationStates = {ValidationStatus::passed, ValidationStatus::failed,
                                                         ValidationStatus::skipped};
const std::vector<network::Transport> kTransports = {network::Transport::ib, network::Transport::socket};
const std::vector<network::GpuDirectState> kGpuDirectStates = {
    network::GpuDirectState::on, network::GpuDirectState::too_far, network::GpuDirectState::unsupported,
    network::GpuDirectState::no_nic, network::GpuDirectState::unknown};
// The most RDMA ports a family lists: a host has a few dozen at most, and a
// scrape must stay small whatever sysfs holds.
constexpr std::size_t kMostPortSamples = 64;

// Each RDMA port as device, port (and more labels), at most kMostPortSamples.
template <typename Add>
void for_each_port(const Report& report, Add add) {
    if (!report.network) return;
    std::size_t count = 0;
    for (const auto& device : report.network->rdma.devices)
        for (const auto& port : device.ports) {
            if (count++ == kMostPortSamples) return;
            add(device, port);
        }
}

const std::vector<CheckStatus> kCheckStates = {CheckStatus::passed,  CheckStatus::failed,  CheckStatus::unsupported,
                                               CheckStatus::error,   CheckStatus::timeout, CheckStatus::not_measured};

const std::vector<RecoveryAction> kRecoveryActions = {RecoveryAction::none,      RecoveryAction::gpu_reset,
                                                     RecoveryAction::node_reboot, RecoveryAction::drain_p2p,
                                                     RecoveryAction::drain_and_reset, RecoveryAction::unknown};

// dcgm-exporter's labels for a GPU: its index as the workload sees it and its UUID.
Labels gpu_labels(const Inventory& inventory, int index) {
    Labels labels{{"gpu", std::to_string(index)}};
    for (const auto& gpu : inventory.gpus)
        if (gpu.index == index && !gpu.uuid.empty()) labels.emplace_back("UUID", gpu.uuid);
    return labels;
}

Labels check_labels(const Report& report, const CheckOutcome& check) {
    Labels labels = gpu_labels(report.inventory, check.gpu);
    labels.emplace_back("check", check.name);
    return labels;
}

// Milliseconds as seconds, to the microsecond: the nearest double to a
// short decimal, so the text reads 0.003429 rather than 0.0034289999999.
double seconds(double ms) { return std::round(ms * 1e3) / 1e6; }

bool measured(const CheckOutcome& check) {
    return check.status == CheckStatus::passed || check.status == CheckStatus::failed;
}

const std::vector<MetricFamily>& metric_table() {
    static const std::vector<MetricFamily> rows = {
        {"provision_info", MetricType::gauge,
         "provision's version, the built-in recipes' digest, the driver and the selected attention mechanism "
         "(value 1).",
         false,
         [](const PublishedRun& run, Samples& out) {
             Labels labels{{"version", PROVISION_VERSION}, {"recipes_digest", run.recipes_digest}};
             if (run.report) {
                 labels.emplace_back("driver_version", run.report->inventory.driver.version);
                 labels.emplace_back("cuda_driver_version", run.report->inventory.driver.cuda);
                 labels.emplace_back("mechanism", run.report->decision.mechanism);
                 labels.emplace_back("workload", run.report->workload);
             }
             out.push_back({labels, 1});
         }},
        {"provision_verdict", MetricType::gauge, "The run's verdict: 1 for the current one, 0 for the others.", false,
         [](const PublishedRun& run, Samples& out) { state_set(out, {}, "verdict", kLevels, run_verdict(run)); }},
        {"provision_validated", MetricType::gauge,
         "1 when the checks passed on every GPU and the verdict is not failed (the validated label).", false,
         [](const PublishedRun& run, Samples& out) { out.push_back({{}, run_validated(run) ? 1.0 : 0.0}); }},
        {"provision_exit_code", MetricType::gauge,
         "The run's exit status (0 with a workload: the handoff; docs/DESIGN.md lists the codes).", false,
         [](const PublishedRun& run, Samples& out) { out.push_back({{}, static_cast<double>(run.exit_code)}); }},
        {"provision_last_run_timestamp_seconds", MetricType::gauge, "When the run ended, in seconds since the epoch.",
         false,
         [](const PublishedRun& run, Samples& out) {
             out.push_back({{}, static_cast<double>(unix_seconds(run.time))});
         }},
        {"provision_validation_status", MetricType::gauge,
         "The GPU validation as a whole: 1 for the current state, 0 for the others.", true,
         [](const PublishedRun& run, Samples& out) {
             state_set(out, {}, "status", kValidationStates, run.report->validation.status);
         }},
        {"provision_validation_duration_seconds", MetricType::gauge,
         "Wall time of the GPU validation (0 when it did not run).", true,
         [](const PublishedRun& run, Samples& out) { out.push_back({{}, seconds(run.report->validation.wall_ms)}); }},
        {"provision_gpus", MetricType::gauge, "GPUs visible to the run.", true,
         [](const PublishedRun& run, Samples& out) {
             out.push_back({{}, static_cast<double>(run.report->inventory.gpus.size())});
         }},
        // The counters DCGM's health watches read, as the driver counts them
        // since the GPU's last reset; a counter the driver cannot read is no sample.
        {"provision_gpu_link_errors", MetricType::gauge,
         "Each GPU's link error counters as the driver reads them (NVLink replay, recovery and CRC; on Blackwell "
         "NVLink recoveries, failed recoveries and symbol errors; PCIe replays).",
         true,
         [](const PublishedRun& run, Samples& out) {
             for (const auto& gpu : run.report->inventory.gpus)
                 for (const auto& [counter, count] : gpu.health.link_errors.named()) {
                     Labels labels = gpu_labels(run.report->inventory, gpu.index);
                     labels.emplace_back("counter", std::string(counter));
                     out.push_back({labels, static_cast<double>(count)});
                 }
         }},
        {"provision_gpu_recovery_action", MetricType::gauge,
         "The recovery the driver asks for on each GPU: 1 for the current one, 0 for the others; no sample where "
         "the driver does not say.",
         true,
         [](const PublishedRun& run, Samples& out) {
             for (const auto& gpu : run.report->inventory.gpus)
                 if (gpu.health.recovery_action)
                     state_set(out, gpu_labels(run.report->inventory, gpu.index), "action", kRecoveryActions,
                               *gpu.health.recovery_action);
         }},
        // pci_bus_id (dcgm-exporter's name) joins these labels once the inventory reads it.
        {"provision_gpu_info", MetricType::gauge, "Each visible GPU: its model, architecture, family and compute capability.",
         true,
         [](const PublishedRun& run, Samples& out) {
             for (const auto& gpu : run.report->inventory.gpus) {
                 Labels labels = gpu_labels(run.report->inventory, gpu.index);
                 labels.emplace_back("model_name", gpu.name);
                 labels.emplace_back("architecture", gpu.architecture);
                 labels.emplace_back("family", gpu.family);
                 labels.emplace_back("compute_capability", gpu.compute_capability.str());
                 out.push_back({labels, 1});
             }
         }},
        {"provision_health_level", MetricType::gauge,
         "The worst level among the health findings: 1 for the current one, 0 for the others.", true,
         [](const PublishedRun& run, Samples& out) {
             state_set(out, {}, "level", kLevels, health_level(*run.report));
         }},
        {"provision_findings", MetricType::gauge, "Health findings (GPU signals, driver faults, packages) per level.",
         true,
         [](const PublishedRun& run, Samples& out) {
             for (const auto level : kLevels) {
                 double count = 0;
                 for (const auto& finding : run.report->findings) count += finding.level == level ? 1 : 0;
                 out.push_back({{{"level", std::string(to_string(level))}}, count});
             }
         }},
        // Findings alike in GPU (or none), signal and level (three packages built for
        // another Python) are one sample counting them: a family never repeats a
        // label set, and the samples of a level add up to provision_findings.
        {"provision_finding", MetricType::gauge,
         "Health findings by signal and level: how many; gpu and UUID name the GPU where the findings have one.",
         true,
         [](const PublishedRun& run, Samples& out) {
             std::map<std::tuple<int, std::string, HealthLevel>, std::size_t> sample_of;
             for (const auto& finding : run.report->findings) {
                 const int gpu = std::max(finding.gpu, -1);
                 const auto [it, added] = sample_of.try_emplace({gpu, finding.signal, finding.level}, out.size());
                 if (!added) {
                     out[it->second].value += 1;
                     continue;
                 }
                 Labels labels = gpu >= 0 ? gpu_labels(run.report->inventory, gpu) : Labels{};
                 labels.emplace_back("signal", finding.signal);
                 labels.emplace_back("level", std::string(to_string(finding.level)));
                 out.push_back({labels, 1});
             }
         }},
        // What the findings ask to be done, by who acts and NVSentinel's action
        // for the node, so that a remediation controller can act on the metric
        // alone; alike findings are one sample counting them, as above.
        {"provision_finding_action", MetricType::gauge,
         "Health findings by the action they ask for: who acts (container, image, node, job, none) and the node's "
         "action in NVSentinel's words; how many.",
         true,
         [](const PublishedRun& run, Samples& out) {
             const Report& report = *run.report;
             std::map<std::tuple<int, std::string, Actor, FleetAction>, std::size_t> sample_of;
             for (std::size_t i = 0; i < report.findings.size() && i < report.actions.size(); ++i) {
                 const Finding& finding = report.findings[i];
                 const Action& action = report.actions[i];
                 const int gpu = std::max(finding.gpu, -1);
                 const auto [it, added] = sample_of.try_emplace({gpu, finding.signal, action.actor, action.fleet}, out.size());
                 if (!added) {
                     out[it->second].value += 1;
                     continue;
                 }
                 Labels labels = gpu >= 0 ? gpu_labels(report.inventory, gpu) : Labels{};
                 labels.emplace_back("signal", finding.signal);
                 labels.emplace_back("actor", std::string(to_string(action.actor)));
                 labels.emplace_back("fleet_action", std::string(to_string(action.fleet)));
                 out.push_back({labels, 1});
             }
         }},
        {"provision_attention_path", MetricType::gauge,
         "Each mechanism's hardware path (its recipe's checks) across the GPUs: 1 for the current state, 0 for the "
         "others.",
         true,
         [](const PublishedRun& run, Samples& out) {
             for (const auto& [mechanism, state] : attention_proofs(*run.report, *run.recipes))
                 state_set(out, {{"mechanism", mechanism}}, "state", all_proof_states(), state);
         }},
        {"provision_feature", MetricType::gauge,
         "Each feature of the recipes (tf32) across the GPUs: 1 for the current state, 0 for the others.", true,
         [](const PublishedRun& run, Samples& out) {
             for (const auto& [feature, state] : feature_proofs(*run.report, *run.recipes))
                 state_set(out, {{"feature", feature}}, "state", all_proof_states(), state);
         }},
        {"provision_proof_timestamp_seconds", MetricType::gauge,
         "When each GPU's checks last ran, in seconds since the epoch (under --repeat a busy GPU's last proof stands).",
         true,
         [](const PublishedRun& run, Samples& out) {
             for (const auto& proof : run.report->validation.proofs)
                 out.push_back({gpu_labels(run.report->inventory, proof.gpu), static_cast<double>(proof.at)});
         }},
        {"provision_gpu_busy", MetricType::gauge,
         "1 for each GPU other processes hold, whose checks did not run this time (never a failed check).", true,
         [](const PublishedRun& run, Samples& out) {
             for (const auto& busy : run.report->validation.busy)
                 out.push_back({gpu_labels(run.report->inventory, busy.gpu), 1});
         }},
        {"provision_check_status", MetricType::gauge,
         "Each check on each GPU: 1 for its status, 0 for the others.", true,
         [](const PublishedRun& run, Samples& out) {
             for (const auto& check : run.report->validation.checks)
                 state_set(out, check_labels(*run.report, check), "status", kCheckStates, check.status);
         }},
        {"provision_check_max_relative_error", MetricType::gauge,
         "The largest relative error of a check's result against its reference.", true,
         [](const PublishedRun& run, Samples& out) {
             for (const auto& check : run.report->validation.checks)
                 if (measured(check)) out.push_back({check_labels(*run.report, check), check.max_rel_error});
         }},
        {"provision_check_duration_seconds", MetricType::gauge, "How long a check's kernel ran.", true,
         [](const PublishedRun& run, Samples& out) {
             for (const auto& check : run.report->validation.checks)
                 if (measured(check) && check.ms > 0)
                     out.push_back({check_labels(*run.report, check), seconds(check.ms)});
         }},
        {"provision_check_throughput_flops", MetricType::gauge,
         "Floating-point operations per second a check measured (--validate=full).", true,
         [](const PublishedRun& run, Samples& out) {
             for (const auto& check : run.report->validation.checks)
                 if (measured(check) && check.tflops > 0)
                     out.push_back({check_labels(*run.report, check), check.tflops * 1e12});
         }},
        {"provision_phase_end_seconds", MetricType::gauge,
         "When each phase of the run ended (the report's timings), in seconds from the run's start: the "
         "process's, or the round's with --repeat.",
         true,
         [](const PublishedRun& run, Samples& out) {
             for (const auto& timing : run.report->timings.phases())
                 out.push_back({{{"phase", std::string(to_string(timing.phase))}},
                                seconds(timing.ms - run.phases_from_ms)});
         }},
        {"provision_link_state", MetricType::gauge,
         "Each pair of GPUs: the path between them and the judgement of its peer access, 1 for the current state "
         "and 0 for the others.",
         true,
         [](const PublishedRun& run, Samples& out) {
             for (const auto& link : run.report->pod.links)
                 state_set(out,
                           {{"gpu", std::to_string(link.pair.first)},
                            {"peer_gpu", std::to_string(link.pair.second)},
                            {"path", link.pair.path_word()}},
                           "state", all_link_states(), link.state);
         }},
        {"provision_link_bandwidth_bytes_per_second", MetricType::gauge,
         "Bytes per second a verified peer copy moved from gpu to peer_gpu.", true,
         [](const PublishedRun& run, Samples& out) {
             for (const auto& link : run.report->pod.links) {
                 if (!link.check) continue;
                 const auto& check = *link.check;
                 for (const auto& [from, to, gb_per_s] :
                      {std::tuple{check.first, check.second, check.gb_per_s_forward},
                       std::tuple{check.second, check.first, check.gb_per_s_backward}})
                     if (gb_per_s > 0)
                         out.push_back({{{"gpu", std::to_string(from)}, {"peer_gpu", std::to_string(to)}},
                                        gb_per_s * 1e9});
             }
         }},
        {"provision_host_copy_bandwidth_bytes_per_second", MetricType::gauge,
         "Bytes per second of pinned copies between the host and each GPU, by direction.", true,
         [](const PublishedRun& run, Samples& out) {
             for (const auto& copy : run.report->pod.host_copies)
                 for (const auto& [direction, gb_per_s] : {std::pair{"host_to_device", copy.h2d_gb_per_s},
                                                           std::pair{"device_to_host", copy.d2h_gb_per_s}})
                     if (gb_per_s > 0) {
                         Labels labels = gpu_labels(run.report->inventory, copy.gpu);
                         labels.emplace_back("direction", direction);
                         out.push_back({labels, gb_per_s * 1e9});
                     }
         }},
        {"provision_job_nodes", MetricType::gauge,
         "The nodes the job spans, from its launcher's variables (1 without a launcher).", true,
         [](const PublishedRun& run, Samples& out) {
             out.push_back({{{"launcher", std::string(network::to_string(run.report->job.launcher))}},
                            static_cast<double>(run.report->job.nodes)});
         }},
        {"provision_network_transport", MetricType::gauge,
         "The transport NCCL would take between nodes (ib: RDMA, socket: TCP): 1 for the current one, 0 for the "
         "other.",
         true,
         [](const PublishedRun& run, Samples& out) {
             if (run.report->network) state_set(out, {}, "transport", kTransports, run.report->network->transport);
         }},
        {"provision_rdma_port_active", MetricType::gauge,
         "Each RDMA port of the host: 1 when ACTIVE, else 0 (at most 64 ports).", true,
         [](const PublishedRun& run, Samples& out) {
             for_each_port(*run.report, [&](const network::RdmaDevice& device, const network::RdmaPort& port) {
                 out.push_back({{{"device", device.name},
                                 {"port", std::to_string(port.number)},
                                 {"link_layer", std::string(network::to_string(port.link_layer))}},
                                port.state == network::PortState::active ? 1.0 : 0.0});
             });
         }},
        {"provision_rdma_port_rate_bytes_per_second", MetricType::gauge,
         "Each RDMA port's signalling rate as sysfs gives it, in bytes per second (at most 64 ports).", true,
         [](const PublishedRun& run, Samples& out) {
             for_each_port(*run.report, [&](const network::RdmaDevice& device, const network::RdmaPort& port) {
                 if (port.rate_gbps)
                     out.push_back({{{"device", device.name}, {"port", std::to_string(port.number)}},
                                    *port.rate_gbps * 1e9 / 8});
             });
         }},
        {"provision_gpudirect_rdma", MetricType::gauge,
         "Each GPU's GPUDirect RDMA to its nearest NIC as NCCL would decide it: 1 for the current state, 0 for the "
         "others.",
         true,
         [](const PublishedRun& run, Samples& out) {
             if (!run.report->network) return;
             for (const auto& gpu : run.report->network->gpudirect.gpus)
                 state_set(out, gpu_labels(run.report->inventory, gpu.gpu), "state", kGpuDirectStates, gpu.state);
         }},
        {"provision_fabric_clique", MetricType::gauge,
         "This node's GPUs in each multi-node NVLink clique (cluster UUID and clique id, as NVML gives them).", true,
         [](const PublishedRun& run, Samples& out) {
             for (const auto& clique : run.report->fabric.cliques)
                 out.push_back({{{"cluster_uuid", clique.cluster_uuid}, {"clique_id", std::to_string(clique.clique_id)}},
                                static_cast<double>(clique.gpus.size())});
         }},
        {"provision_mnnvl_proven", MetricType::gauge,
         "1 when memory with a fabric handle was exported, imported, mapped and read back on every GPU NCCL's "
         "multi-node NVLink check covers, 0 when that failed (absent where not checked).",
         true,
         [](const PublishedRun& run, Samples& out) {
             if (run.report->fabric.proven) out.push_back({{}, *run.report->fabric.proven ? 1.0 : 0.0});
         }},
        {"provision_number_format", MetricType::gauge,
         "Each number format of the recipes (bf16, fp8, ...) across the GPUs, as the report's formats judge it: 1 "
         "for the current state, 0 for the others.",
         true,
         [](const PublishedRun& run, Samples& out) {
             for (const FormatReport& format : run.report->formats.formats)
                 state_set(out, {{"format", format.name}}, "state", all_format_states(), format.state);
         }},
    };
    return rows;
}

std::string type_word(MetricType type) { return type == MetricType::counter ? "counter" : "gauge"; }

// HELP text escapes only `\` and line feeds.
std::string escape_help(std::string_view help) {
    std::string out;
    for (const char c : help) {
        if (c == '\\') out += "\\\\";
        else if (c == '\n') out += "\\n";
        else out += c;
    }
    return out;
}

// The most repeated samples a family names, each on a comment line of its own
// (escaped label values hold no line feed).
constexpr std::size_t kMostRepeatsNamed = 16;

}  // namespace

std::string escape_label_value(std::string_view value) {
    std::string out;
    for (std::size_t at = 0; at < value.size();) {
        const auto decoded = decode_utf8_at(value, at);
        if (!decoded) {
            append_utf8(out, U'\uFFFD');
            ++at;
            continue;
        }
        const char32_t c = decoded->code_point;
        if (c == '\\') out += "\\\\";
        else if (c == '"') out += "\\\"";
        else if (c == '\n') out += "\\n";
        else if (c < 0x20 || c == 0x7F || (c >= 0x80 && c <= 0x9F)) append_utf8(out, U'\uFFFD');
        else out.append(value.substr(at, decoded->length));
        at += decoded->length;
    }
    return out;
}

std::string sample_value(double value) {
    if (std::isnan(value)) return "NaN";
    if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
    return fmt::format("{}", value);
}

std::string render_metrics(const PublishedRun& run) {
    std::string text;
    std::size_t unnamed_repeats = 0;
    for (const auto& family : metric_table()) {
        if (family.needs_report && (!run.report || !run.recipes)) continue;
        Samples samples;
        family.samples(run, samples);
        if (samples.empty()) continue;
        text += fmt::format("# HELP {} {}\n# TYPE {} {}\n", family.name, escape_help(family.help), family.name,
                            type_word(family.type));
        // Values that differ only in bytes escaping maps to U+FFFD come out
        // alike; a repeated label set is refused by node-exporter, so the
        // later sample is left out, and said so in a comment.
        std::set<std::string> written;
        std::vector<std::string> repeats;
        for (const auto& sample : samples) {
            std::string series(family.name);
            if (!sample.labels.empty()) {
                series += '{';
                for (std::size_t i = 0; i < sample.labels.size(); ++i)
                    series += fmt::format("{}{}=\"{}\"", i ? "," : "", sample.labels[i].first,
                                          escape_label_value(sample.labels[i].second));
                series += '}';
            }
            if (!written.insert(series).second) {
                if (repeats.size() < kMostRepeatsNamed) repeats.push_back(std::move(series));
                else ++unnamed_repeats;
                continue;
            }
            text += fmt::format("{} {}\n", series, sample_value(sample.value));
        }
        for (const std::string& series : repeats)
            text += fmt::format("# left out: {}: its labels, escaped, repeat another sample's\n", series);
    }
    if (unnamed_repeats > 0)
        text += fmt::format("# left out: {} more samples whose labels, escaped, repeat another's\n", unnamed_repeats);
    return text;
}

}  // namespace provision
