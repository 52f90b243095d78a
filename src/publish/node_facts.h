// The facts both the labels and the metrics publish, each derived in one
// place from a run, so the two never disagree.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/states.h"
#include "gpu/inventory.h"
#include "pod/pod.h"
#include "publish/hardware_proof.h"
#include "publish/published_run.h"

namespace provision {

// The run's verdict; a run that stopped before its report failed.
HealthLevel run_verdict(const PublishedRun& run);

// Whether the node may be trusted today: the checks passed on every GPU and
// the verdict is not failed (a GPU deemed unhealthy after passing its checks
// is not validated).
bool run_validated(const PublishedRun& run);

// The worst level among the health findings (GPU signals, driver faults, packages).
HealthLevel health_level(const Report& report);

// The least capable visible GPU (lowest compute capability, first by index
// among equals): the node's GPU facts hold for every GPU at least.  nullptr
// without GPUs.
const Gpu* least_capable_gpu(const Inventory& inventory);

// Each mechanism the recipes give checks (a hardware path to prove), with
// its proof across the visible GPUs.
std::map<std::string, ProofState> attention_proofs(const Report& report, const RecipeSet& recipes);

// Each feature of the recipes that is a setting ([features.tf32]), with the
// proof of its checks; the number formats are the report's `formats`.
std::map<std::string, ProofState> feature_proofs(const Report& report, const RecipeSet& recipes);

// The node's peer access over every pair of GPUs, worst first: "broken"
// (measured, or a known-broken GPU and driver), "unavailable", "slow",
// "unknown", else "ok".  nullopt without a pair (fewer than two GPUs).
std::optional<std::string> peer_access_summary(const PodReport& pod);

// Between nodes, where the network stage ran (a job over several nodes, or
// labels and metrics asked for): whether an RDMA port NCCL could take is
// active ("true"/"false"), their link layer ("infiniband", "ethernet",
// "mixed"; nullopt without one), and whether every visible GPU gets
// GPUDirect RDMA to its nearest such NIC.  nullopt where the stage did not run.
std::optional<std::string> rdma_summary(const Report& report);
std::optional<std::string> rdma_link_layer_summary(const Report& report);
std::optional<std::string> gpudirect_summary(const Report& report);

// Why a run stopped before its report, as a word: "usage", "invalid-input",
// "internal" (an internal error, exit 1).
std::string_view stop_reason(ExitCode code);

}  // namespace provision
