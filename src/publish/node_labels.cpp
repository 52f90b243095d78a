#include "publish/node_labels.h"

#include <algorithm>
#include <ctime>

#include <fmt/format.h>

#include "core/label_rules.h"
#include "core/text.h"
#include "formats/format_state.h"
#include "health/actions.h"
#include "publish/node_facts.h"

namespace provision {
namespace {

using Value = std::optional<std::string>;  // nullopt: the label is not written for this run

// One label, or one per key of `keys` ("attention.{}": one per mechanism).
// A new fact about the node is one more row.
struct LabelRow {
    std::string_view name;   // after "PREFIX/"; "{}" stands for each key
    bool needs_report;       // false: also written by a run that stopped before its report
    Value (*value)(const PublishedRun& run, const std::string& key);
    std::vector<std::string> (*keys)(const PublishedRun& run) = nullptr;
};

std::string boolean(bool value) { return value ? "true" : "false"; }

// Whether a finding asks `actor` to act.
bool asks(const Report& report, Actor actor) {
    return std::any_of(report.actions.begin(), report.actions.end(),
                       [&](const Action& action) { return action.actor == actor && !action.what.empty(); });
}

const Gpu* least_capable(const PublishedRun& run) { return least_capable_gpu(run.report->inventory); }

// "13.0" -> "13" (part 0) or "0" (part 1); nullopt when there is no such part.
Value version_part(const std::string& version, std::size_t part) {
    std::size_t start = 0;
    for (std::size_t i = 0; i < part; ++i) {
        start = version.find('.', start);
        if (start == std::string::npos) return std::nullopt;
        ++start;
    }
    const std::string piece = version.substr(start, version.find('.', start) - start);
    return piece.empty() ? std::nullopt : Value(piece);
}

template <typename Map>
std::vector<std::string> keys_of(const Map& map) {
    std::vector<std::string> keys;
    for (const auto& [key, value] : map) keys.push_back(key);
    return keys;
}

const std::vector<LabelRow>& label_table() {
    static const std::vector<LabelRow> rows = {
        {"verdict", false, [](const PublishedRun& run, const std::string&) -> Value {
             return std::string(to_string(run_verdict(run)));
         }},
        {"validated", false, [](const PublishedRun& run, const std::string&) -> Value {
             return boolean(run_validated(run));
         }},
        {"timestamp", false, [](const PublishedRun& run, const std::string&) -> Value {
             return std::to_string(unix_seconds(run.time));
         }},
        {"error", false, [](const PublishedRun& run, const std::string&) -> Value {
             if (run.report) return std::nullopt;
             return std::string(stop_reason(run.exit_code));
         }},
        {"validated.timestamp", true, [](const PublishedRun& run, const std::string&) -> Value {
             // The oldest proof standing: a scheduler can ask for proofs younger than a day.
             const auto& proofs = run.report->validation.proofs;
             if (proofs.empty()) return std::nullopt;
             std::int64_t oldest = proofs.front().at;
             for (const auto& proof : proofs) oldest = std::min(oldest, proof.at);
             return std::to_string(oldest);
         }},
        {"validation", true, [](const PublishedRun& run, const std::string&) -> Value {
             return std::string(to_string(run.report->validation.status));
         }},
        {"health", true, [](const PublishedRun& run, const std::string&) -> Value {
             return std::string(to_string(health_level(*run.report)));
         }},
        // Who must act on the findings (docs/DESIGN.md "What to do about a
        // finding"), and the strongest node action in NVSentinel's words.
        {"action.container", true, [](const PublishedRun& run, const std::string&) -> Value {
             return boolean(asks(*run.report, Actor::container));
         }},
        {"action.image", true, [](const PublishedRun& run, const std::string&) -> Value {
             return boolean(asks(*run.report, Actor::image));
         }},
        {"action.job", true, [](const PublishedRun& run, const std::string&) -> Value {
             return boolean(asks(*run.report, Actor::job));
         }},
        {"action.node", true, [](const PublishedRun& run, const std::string&) -> Value {
             return boolean(asks(*run.report, Actor::node));
         }},
        {"action.fleet", true, [](const PublishedRun& run, const std::string&) -> Value {
             FleetAction strongest = FleetAction::none;
             for (const Action& action : run.report->actions)
                 if (action.actor == Actor::node && fleet_severity(action.fleet) > fleet_severity(strongest))
                     strongest = action.fleet;
             return std::string(to_string(strongest));
         }},
        {"gpu.count", true, [](const PublishedRun& run, const std::string&) -> Value {
             return std::to_string(run.report->inventory.gpus.size());
         }},
        {"gpu.family", true, [](const PublishedRun& run, const std::string&) -> Value {
             const Gpu* gpu = least_capable(run);
             // The family, as GPU Feature Discovery's gpu.family names it
             // ("blackwell" for datacenter and consumer parts alike).
             if (!gpu || gpu->family.empty()) return std::nullopt;
             return gpu->family;
         }},
        {"gpu.product", true, [](const PublishedRun& run, const std::string&) -> Value {
             const Gpu* gpu = least_capable(run);
             if (!gpu) return std::nullopt;
             return gpu_product_value(gpu->name);
         }},
        {"gpu.compute", true, [](const PublishedRun& run, const std::string&) -> Value {
             const Gpu* gpu = least_capable(run);
             return gpu ? Value(gpu->compute_capability.str()) : std::nullopt;
         }},
        {"gpu.compute.major", true, [](const PublishedRun& run, const std::string&) -> Value {
             const Gpu* gpu = least_capable(run);
             return gpu ? Value(std::to_string(gpu->compute_capability.major)) : std::nullopt;
         }},
        {"gpu.compute.minor", true, [](const PublishedRun& run, const std::string&) -> Value {
             const Gpu* gpu = least_capable(run);
             return gpu ? Value(std::to_string(gpu->compute_capability.minor)) : std::nullopt;
         }},
        {"driver.version", true, [](const PublishedRun& run, const std::string&) -> Value {
             const auto& driver = run.report->inventory.driver;
             return driver.present && !driver.version.empty() ? Value(driver.version) : std::nullopt;
         }},
        {"cuda.driver", true, [](const PublishedRun& run, const std::string&) -> Value {
             const auto& cuda = run.report->inventory.driver.cuda;
             return cuda.empty() ? std::nullopt : Value(cuda);
         }},
        {"cuda.driver.major", true, [](const PublishedRun& run, const std::string&) -> Value {
             return version_part(run.report->inventory.driver.cuda, 0);
         }},
        {"cuda.driver.minor", true, [](const PublishedRun& run, const std::string&) -> Value {
             return version_part(run.report->inventory.driver.cuda, 1);
         }},
        // Each mechanism whose hardware path (its recipe's checks) passed on every GPU.
        {"attention.{}", true,
         [](const PublishedRun& run, const std::string& mechanism) -> Value {
             return boolean(attention_proofs(*run.report, *run.recipes).at(mechanism) == ProofState::passed);
         },
         [](const PublishedRun& run) { return keys_of(attention_proofs(*run.report, *run.recipes)); }},
        // Each feature of the recipes (tf32) whose checks passed on every GPU.
        {"{}", true,
         [](const PublishedRun& run, const std::string& feature) -> Value {
             return boolean(feature_proofs(*run.report, *run.recipes).at(feature) == ProofState::passed);
         },
         [](const PublishedRun& run) { return keys_of(feature_proofs(*run.report, *run.recipes)); }},
        // Peer access between the GPUs, where there are pairs (the report's `pod.links`).
        {"p2p", true,
         [](const PublishedRun& run, const std::string&) -> Value { return peer_access_summary(run.report->pod); }},
        // Between nodes, where the network stage ran (the report's `network`): an RDMA port
        // NCCL could take, its link layer, and GPUDirect RDMA on every GPU.
        {"rdma", true, [](const PublishedRun& run, const std::string&) -> Value { return rdma_summary(*run.report); }},
        {"rdma.link_layer", true,
         [](const PublishedRun& run, const std::string&) -> Value { return rdma_link_layer_summary(*run.report); }},
        {"gpudirect", true,
         [](const PublishedRun& run, const std::string&) -> Value { return gpudirect_summary(*run.report); }},
        // Multi-node NVLink, where the fabric is such a domain (the report's `fabric`): the
        // clique of the node's GPUs, one value per clique as nvidia.com/gpu.clique writes it
        // (CLUSTER_UUID.CLIQUE_ID; none where the GPUs span several), and whether fabric
        // handles were proven (true, false; none where not checked).
        {"gpu.clique", true,
         [](const PublishedRun& run, const std::string&) -> Value {
             const FabricReport& fabric = run.report->fabric;
             if (!fabric.ran || fabric.cliques.size() != 1) return std::nullopt;
             return fmt::format("{}.{}", fabric.cliques.front().cluster_uuid, fabric.cliques.front().clique_id);
         }},
        {"mnnvl", true,
         [](const PublishedRun& run, const std::string&) -> Value {
             const FabricReport& fabric = run.report->fabric;
             if (!fabric.ran || !fabric.proven) return std::nullopt;
             return boolean(*fabric.proven);
         }},
        // Each number format of the recipes (bf16, fp8, ...): proven on every GPU (the report's `formats`).
        {"{}", true,
         [](const PublishedRun& run, const std::string& format) -> Value {
             for (const FormatReport& report : run.report->formats.formats)
                 if (report.name == format) return boolean(report.state == FormatState::passed);
             return std::nullopt;
         },
         [](const PublishedRun& run) {
             std::vector<std::string> names;
             for (const FormatReport& report : run.report->formats.formats) names.push_back(report.name);
             return names;
         }},
    };
    return rows;
}

std::string expand(std::string_view pattern, const std::string& key) {
    std::string name(pattern);
    if (const auto at = name.find("{}"); at != std::string::npos) name.replace(at, 2, key);
    return name;
}

std::string rfc3339(std::chrono::system_clock::time_point time) {
    const std::time_t seconds = std::chrono::system_clock::to_time_t(time);
    std::tm utc{};
    gmtime_r(&seconds, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return text;
}

}  // namespace

NodeLabels node_labels(const PublishedRun& run, const std::string& prefix) {
    NodeLabels result;
    auto add = [&](const std::string& name, const Value& value) {
        if (!value) return;
        const std::string key = fmt::format("{}/{}", prefix, name);
        if (auto problem = label_key_problem(key)) {
            result.left_out.push_back(fmt::format("{}: {}", printable(key, 96), *problem));
        } else if (auto problem = label_value_problem(*value)) {
            result.left_out.push_back(fmt::format("{}: \"{}\": {}", key, printable(*value, 96), *problem));
        } else {
            result.labels.push_back({key, *value});
        }
    };
    for (const auto& row : label_table()) {
        if (row.needs_report && (!run.report || !run.recipes)) continue;
        if (!row.keys) {
            add(std::string(row.name), row.value(run, ""));
            continue;
        }
        for (const auto& key : row.keys(run)) add(expand(row.name, key), row.value(run, key));
    }
    return result;
}

std::string render_feature_file(const NodeLabels& labels, const PublishedRun& run,
                                const std::optional<std::chrono::system_clock::time_point>& expires) {
    // No comment may start with "# +": NFD reads such a line as a directive.
    std::string text = fmt::format(
        "# Node labels written by provision {} at {} for Node Feature Discovery's local source.\n"
        "# Replaced whole by every run; docs/DESIGN.md lists the labels.\n",
        PROVISION_VERSION, rfc3339(run.time));
    if (expires) text += fmt::format("# +expiry-time={}\n", rfc3339(*expires));
    for (const auto& label : labels.labels) text += fmt::format("{}={}\n", label.key, label.value);
    for (const auto& note : labels.left_out) text += fmt::format("# left out: {}\n", printable(note, 512));
    return text;
}

}  // namespace provision
