// What the recipes say about a pod of several GPUs (recipes/pod.toml, the
// [pod] table): the bandwidth each kind of link gives, the share under which
// a measured link counts as slow, the /dev/shm floor, the GPU and driver
// combinations whose peer access is known to be broken, and the settings
// that tell NCCL (and a workload's launcher) which peer paths not to use.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace provision {

// One NVLink generation: what a copy between two GPUs gets per link joining
// them, one direction.
struct NvLinkFigure {
    unsigned generation = 0;
    std::vector<std::string> architectures;  // the families that carry it, where NVML cannot tell the generation
    double gb_per_s_per_link = 0;
    bool estimate = false;                   // no published measurement: a figure worked out from the link rate
};

// One PCIe generation: what a copy over a x16 link gets, one direction; a
// narrower link gets its share (x8 half).
struct PcieFigure {
    unsigned generation = 0;
    double x16_gb_per_s = 0;
    bool estimate = false;
};

// GPUs whose peer access is reported available but is broken (hangs or
// wrong bytes), as others' launchers encode it: applies where the copy check
// could not run.
struct KnownBrokenPeerAccess {
    std::vector<std::string> gpu_names;  // a GPU whose NVML name contains one of these
    unsigned min_gpus = 2;               // visible GPUs, inclusive
    unsigned max_gpus = 0;               // inclusive; 0 for no bound
    std::string driver_below;            // only on drivers older than this ("550.40.07"); empty: any
    bool nvlink_pairs = false;           // also pairs joined by NVLink (PCIe pairs only by default)
    std::string source;                  // where the rule comes from
};

// Which variables to write when peer-to-peer copies are broken: on PCIe
// pairs only while NVLink pairs pass, or on NVLink pairs too (or where no
// NVLink pair exists).  Variables are written only where the user set none
// of them.
struct PeerAccessSettings {
    std::string description;
    std::map<std::string, std::string> env_pcie_broken;
    std::map<std::string, std::string> env_broken;

    bool empty() const { return env_pcie_broken.empty() && env_broken.empty(); }
};

// A known defect of NCCL on a path provision proves (recipes/pod.toml,
// [[pod.nccl_defects]]): the versions it affects, the condition, the
// workaround, and where it is reported.  Written only where the user asks
// for workarounds (--apply-workarounds).
struct NcclDefect {
    std::string name;                          // a short key, for the finding and the report
    std::vector<std::string> nccl_versions;    // exact versions ("2.27.5")
    unsigned min_clique_gpus = 0;              // multi-node NVLink cliques of this many GPUs or more
    std::map<std::string, std::string> workaround;  // the variables that avoid it
    std::string source;
};

struct PodRecipe {
    double p2p_slow_below = 0.5;          // a peer copy under this share of its path's figure is slow
    double host_copy_slow_below = 0.5;    // a pinned host copy under this share of its link's figure
    std::uint64_t shm_min_bytes = 1ULL << 30;  // /dev/shm below this is too small
    std::vector<NvLinkFigure> nvlink;     // by generation, one each
    std::vector<PcieFigure> pcie;         // by generation, one each
    std::vector<KnownBrokenPeerAccess> known_broken_p2p;
    PeerAccessSettings p2p_settings;
    std::vector<NcclDefect> nccl_defects;

    // By NVML's generation, else the first figure naming the GPU's
    // architecture, else its family.
    const NvLinkFigure* nvlink_figure(unsigned generation, const std::string& architecture,
                                      const std::string& family = {}) const;
    const PcieFigure* pcie_figure(unsigned generation) const;
};

}  // namespace provision
