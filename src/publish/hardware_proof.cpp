#include "publish/hardware_proof.h"

#include <algorithm>

namespace provision {

const std::vector<ProofState>& all_proof_states() {
    static const std::vector<ProofState> states = {ProofState::passed, ProofState::failed, ProofState::unsupported,
                                                   ProofState::skipped, ProofState::unverified};
    return states;
}

std::string_view to_string(ProofState state) {
    switch (state) {
        case ProofState::passed: return "passed";
        case ProofState::failed: return "failed";
        case ProofState::unsupported: return "unsupported";
        case ProofState::skipped: return "skipped";
        case ProofState::unverified: return "unverified";
    }
    return "unverified";
}

ProofState prove(const std::vector<std::string>& checks, const Inventory& inventory,
                 const std::map<std::string, CheckSpec>& check_specs, const ValidationSummary& validation) {
    if (inventory.gpus.empty()) return ProofState::unsupported;
    if (checks.empty()) return ProofState::unverified;
    bool failed = false, unsupported = false, all_passed = true;
    for (const auto& gpu : inventory.gpus) {
        for (const auto& check : checks) {
            const auto spec = check_specs.find(check);
            if (spec != check_specs.end() && !spec->second.compute_capability.contains(gpu.compute_capability)) {
                unsupported = true;
                all_passed = false;
                continue;
            }
            const auto outcome = std::find_if(validation.checks.begin(), validation.checks.end(), [&](const auto& c) {
                return c.gpu == gpu.index && c.name == check;
            });
            if (outcome == validation.checks.end()) {
                all_passed = false;
                continue;
            }
            switch (outcome->status) {
                case CheckStatus::passed: break;
                case CheckStatus::unsupported: unsupported = true, all_passed = false; break;
                case CheckStatus::failed:
                case CheckStatus::error:
                case CheckStatus::timeout: failed = true, all_passed = false; break;
                case CheckStatus::not_measured: all_passed = false; break;
            }
        }
    }
    if (failed) return ProofState::failed;
    if (unsupported) return ProofState::unsupported;
    if (all_passed) return ProofState::passed;
    return validation.status == ValidationStatus::skipped ? ProofState::skipped : ProofState::unverified;
}

}  // namespace provision
