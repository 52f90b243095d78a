#include "publish/node_facts.h"

#include <algorithm>

#include "health/findings.h"

namespace provision {

HealthLevel run_verdict(const PublishedRun& run) { return run.report ? run.report->verdict : HealthLevel::failed; }

bool run_validated(const PublishedRun& run) {
    return run.report && run.report->validation.status == ValidationStatus::passed &&
           run.report->verdict != HealthLevel::failed;
}

HealthLevel health_level(const Report& report) { return worst_level(report.findings); }

const Gpu* least_capable_gpu(const Inventory& inventory) {
    const Gpu* least = nullptr;
    for (const auto& gpu : inventory.gpus)
        if (!least || gpu.compute_capability < least->compute_capability) least = &gpu;
    return least;
}

std::map<std::string, ProofState> attention_proofs(const Report& report, const RecipeSet& recipes) {
    std::map<std::string, ProofState> proofs;
    for (const auto& [name, mechanism] : recipes.mechanisms)
        if (!mechanism.checks.empty())
            proofs[name] = prove(mechanism.checks, report.inventory, recipes.checks, report.validation);
    return proofs;
}

std::map<std::string, ProofState> feature_proofs(const Report& report, const RecipeSet& recipes) {
    std::map<std::string, ProofState> proofs;
    for (const auto& [name, feature] : recipes.features)
        if (!feature.number_format)  // the number formats have the report's `formats`
            proofs[name] = prove(feature.checks, report.inventory, recipes.checks, report.validation);
    return proofs;
}

std::optional<std::string> peer_access_summary(const PodReport& pod) {
    if (pod.links.empty()) return std::nullopt;
    auto any = [&](auto test) { return std::any_of(pod.links.begin(), pod.links.end(), test); };
    if (any([](const LinkReport& link) { return link.broken(); })) return "broken";
    for (const LinkState state : {LinkState::unavailable, LinkState::slow, LinkState::unknown, LinkState::not_measured})
        if (any([&](const LinkReport& link) { return link.state == state; })) return std::string(to_string(state));
    return "ok";
}

std::string_view stop_reason(ExitCode code) {
    switch (code) {
        case ExitCode::internal_error: return "internal";
        case ExitCode::usage: return "usage";
        case ExitCode::invalid_input: return "invalid-input";
        case ExitCode::no_mechanism: return "no-mechanism";
        case ExitCode::validation_failed: return "validation-failed";
        case ExitCode::io_failure: return "io-failure";
        case ExitCode::gpu_busy: return "gpu-busy";
        default: return "error";
    }
}

std::optional<std::string> rdma_summary(const Report& report) {
    if (!report.network) return std::nullopt;
    return report.network->taken.empty() ? "false" : "true";
}

std::optional<std::string> rdma_link_layer_summary(const Report& report) {
    if (!report.network || report.network->taken.empty()) return std::nullopt;
    bool infiniband = false, ethernet = false;
    for (const auto& taken : report.network->taken) {
        const auto layer = report.network->rdma.devices[taken.device].ports[taken.port].link_layer;
        infiniband = infiniband || layer == network::LinkLayer::infiniband;
        ethernet = ethernet || layer == network::LinkLayer::ethernet;
    }
    return infiniband && ethernet ? "mixed" : infiniband ? "infiniband" : "ethernet";
}

std::optional<std::string> gpudirect_summary(const Report& report) {
    if (!report.network) return std::nullopt;
    const auto& gpus = report.network->gpudirect.gpus;
    const bool all = !gpus.empty() && std::all_of(gpus.begin(), gpus.end(), [](const network::GpuDirectGpu& gpu) {
        return gpu.state == network::GpuDirectState::on;
    });
    return all ? "true" : "false";
}

}  // namespace provision
