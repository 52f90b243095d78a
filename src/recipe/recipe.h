// The recipes as plain values: architectures, mechanisms, validation checks,
// features (TF32) and workloads.  Loaded from TOML by recipe_loader.h.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/compute_capability.h"
#include "core/source_ref.h"
#include "core/states.h"
#include "recipe/pod_recipe.h"
#include "recipe/throughput.h"

namespace provision {

struct CapabilityBounds {
    std::optional<ComputeCapability> min;
    std::optional<ComputeCapability> max;
    bool contains(const ComputeCapability& cc) const;
    std::string str() const;  // "sm_80 ... sm_90", "sm_75 or newer"
};

struct ArchitectureSpec {
    std::string name;
    std::vector<ComputeCapability> compute_capabilities;  // exact matches
    CapabilityBounds bounds;                               // or a range
    // The family it belongs to ("blackwell" for blackwell_datacenter and
    // blackwell_consumer); empty: a family of its own, of its own name.
    std::string family;
    bool matches(const ComputeCapability& cc) const;
    const std::string& family_name() const { return family.empty() ? name : family; }
};

// One entry of a mechanism's `packages`: any of the alternatives will do
// ("flash_attn_3" or the older "flashattn-hopper").
struct PackageAlternatives {
    std::vector<std::string> any_of;  // requirement strings, e.g. "flash-attn>=2.6.3"
};

struct MechanismSpec {
    std::string name;
    std::string description;
    std::vector<std::string> aliases;
    std::vector<PackageAlternatives> packages;
    // architecture -> packages needed besides `packages` on GPUs of it
    // (Blackwell needs a Triton that can compile for it)
    std::map<std::string, std::vector<PackageAlternatives>> packages_for;
    CapabilityBounds compute_capability;
    // A ceiling that holds only while the device code of the mechanism's
    // packages cannot be read (only their dist-info is there): once it is
    // read, the code's targets decide instead.
    std::optional<ComputeCapability> assumed_max_compute_capability;
    bool requires_gpu = false;  // true when any compute-capability bound is set
    std::string min_driver_cuda;                              // "12.3"
    std::map<std::string, std::string> min_driver_cuda_for;   // architecture -> version
    // package -> the driver's CUDA needed while that package is installed
    // (the CUDA 13 build of the CuTe DSL needs a CUDA 13 driver)
    std::map<std::string, std::string> min_driver_cuda_with;
    // Pairs of packages whose versions must agree while both are installed
    // (flashinfer-cubin and flashinfer-python: FlashInfer refuses to import
    // otherwise); local version labels ("+cu130") aside.
    std::vector<std::pair<std::string, std::string>> same_versions;
    // The least cuDNN the torch build must load ("9.15.1"); empty: none.
    std::string min_cudnn;
    std::vector<std::string> checks;                          // validation checks it needs
    // The dtype order (PROVISION_DTYPE) where this mechanism is selected, in
    // place of [dtypes] preference; empty: the global one.
    std::vector<std::string> dtype_preference;

    // `packages` and the packages_for entries of `architectures` (the visible
    // GPUs' architectures and families).
    std::vector<PackageAlternatives> packages_on(const std::vector<std::string>& architectures) const;
};

struct CheckSpec {
    std::string name;
    std::string description;
    CapabilityBounds compute_capability;  // where the check can run at all
};

// A setting that is switched on only where its checks pass (TF32), or a
// number format the GPUs run (bf16, fp8), reported in the report's "formats".
struct FeatureSpec {
    std::string name;
    std::string description;
    CapabilityBounds compute_capability;
    std::vector<std::string> checks;
    std::map<std::string, std::string> env_enabled;
    std::map<std::string, std::string> env_disabled;
    bool number_format = false;  // reported under "formats", with a state per GPU
    std::string dtype;           // the torch dtype it stands for ("bfloat16"); empty: none
    // Installed packages that must be new enough for the feature to be on
    // (fp8 through torch._scaled_mm on Ada: torch >= 2.3); a package that is
    // not installed gates nothing.
    std::vector<PackageAlternatives> package_gates;
    std::map<std::string, std::vector<PackageAlternatives>> package_gates_for;  // architecture -> gates

    // `package_gates` and the package_gates_for entries of `architectures`.
    std::vector<PackageAlternatives> package_gates_on(const std::vector<std::string>& architectures) const;
};

// What a workload needs to use a mechanism, where that differs from the
// mechanism's own recipe: a workload that ships its own build of the kernels
// (vLLM bundles FlashAttention) or asks for a newer release (diffusers wants
// flash-attn >= 2.6.3).  Unset fields keep the mechanism's value.
struct MechanismRequirements {
    std::optional<std::vector<PackageAlternatives>> packages;
    std::optional<ComputeCapability> min_compute_capability;
    std::optional<ComputeCapability> max_compute_capability;
};

struct WorkloadSpec {
    std::string name;
    std::string description;
    // architecture or family (or "cpu", "default") -> mechanisms in order of
    // preference; an architecture's own order wins over its family's
    std::map<std::string, std::vector<std::string>> preference;
    std::map<std::string, SourceRef> preference_source;
    std::map<std::string, std::string> env;       // always written
    std::map<std::string, std::string> gpu_env;   // written when a GPU is visible
    std::vector<std::string> override_variables;  // besides PROVISION_ATTENTION
    // variable -> mechanism -> value the workload expects ("*" = any other)
    std::map<std::string, std::map<std::string, std::string>> mechanism_env;
    // mechanism -> flags appended to the handed-off command
    std::map<std::string, std::vector<std::string>> arguments;
    // flags that, when the user already gave one, stop provision adding its own
    std::vector<std::string> conflicting_arguments;
    // mechanism -> requirements that replace the mechanism's own for this workload
    std::map<std::string, MechanismRequirements> mechanism_requirements;
    // The dtype order for this workload, in place of the mechanism's and
    // [dtypes]'s; empty: theirs.
    std::vector<std::string> dtype_preference;
    // dtype -> flags that carry it to the workload, for a workload that would
    // not choose that dtype well itself (SGLang keeps a bf16 model in bf16 on
    // a GPU without bf16)
    std::map<std::string, std::vector<std::string>> dtype_arguments;
    // what the workload's launcher reads where peer-to-peer copies are
    // broken, besides [pod.p2p_settings] (vLLM's own P2P check)
    PeerAccessSettings p2p_settings;
};

// [policy]: how much each health signal and driver fault class weighs
// (recipe/health_signals.h names them).
struct HealthPolicy {
    std::map<std::string, HealthLevel> levels;
    // GPU memory in use at start from which "memory_in_use" counts, besides
    // any running compute process.
    std::uint64_t memory_in_use_min_mib = 1024;
    // DCGM's limits (recipes/policy.toml cites them): retired pages and
    // uncorrectable remapped rows from which their signals count, and the
    // NVLink CRC errors a second from which a rise during the copies counts.
    std::uint64_t retired_pages_max = 63;
    std::uint64_t uncorrectable_remapped_rows_max = 512;
    double nvlink_crc_per_second_max = 100;
    // The share of the expected bus bandwidth (the transport's: RDMA ports'
    // rates, the socket interface's speed) under which the proof across
    // nodes is "nccl_bandwidth_low", in percent.
    std::uint64_t proof_bandwidth_min_percent = 50;
    // The Xids that count as critical ("xid_critical").
    std::vector<int> critical_xids;

    // A key no recipe sets weighs "degraded": reported, and the pod proceeds.
    HealthLevel level(const std::string& key) const;
};

// A family of PyTorch wheels ([torch_builds.NAME]): where they are, the CUDA
// they are built with, which torch releases, and the GPUs they carry SASS for.
struct TorchBuildSpec {
    std::string name;    // "cu128"
    std::string index;   // "https://download.pytorch.org/whl/cu128"
    std::string cuda;    // "12.8"
    std::string torch;   // ">=2.10": the releases, as a requirement specifier
    std::vector<ComputeCapability> sass;
};

// [node_labels]: how the labels for Kubernetes nodes are named
// (--node-labels).  The loader refuses a prefix that breaks Kubernetes'
// rules (core/label_rules.h), an empty one included, at its position.
struct NodeLabelSettings {
    std::string prefix;  // "" only when no recipe sets it: src/publish's default
    SourceRef source;    // where the prefix was set
};

struct RecipeSet {
    std::vector<ArchitectureSpec> architectures;  // in file order
    std::map<std::string, MechanismSpec> mechanisms;
    std::map<std::string, CheckSpec> checks;
    std::map<std::string, FeatureSpec> features;
    std::map<std::string, WorkloadSpec> workloads;
    std::vector<std::string> site_packages;      // glob patterns
    ThroughputTable throughput;                  // expected full-mode figures per GPU model
    PodRecipe pod;                               // links between GPUs and the container's limits
    HealthPolicy policy;
    std::map<std::string, TorchBuildSpec> torch_builds;
    // [dtypes] preference: PROVISION_DTYPE is the first of these that every
    // visible GPU runs ("float32" needs no format)
    std::vector<std::string> dtype_preference;
    NodeLabelSettings node_labels;
    std::vector<std::string> files;              // every file loaded, in order

    const ArchitectureSpec* architecture(const std::string& name) const;
    // Every family an architecture names, its own included, sorted.
    std::vector<std::string> family_names() const;
    // Canonical mechanism name for a name or alias (case-insensitive), or nullopt.
    std::optional<std::string> canonical_mechanism(const std::string& name) const;
    std::vector<std::string> mechanism_names() const;
    // Every dtype a recipe can name: "float32" and the number formats' dtypes.
    std::vector<std::string> dtype_names() const;
    // The mechanism as `workload` needs it: its own recipe with the
    // workload's mechanism_requirements applied.
    MechanismSpec mechanism_for(const WorkloadSpec& workload, const std::string& name) const;
};

}  // namespace provision
