// Simulated machines (--gpu-fixture): a TOML file that stands in for NVML and
// the driver, in the format of docs/DESIGN.md:
//
//   [driver]                 version = "580.159.04", cuda = "13.0"
//   [[gpus]]                 name, compute_capability = "9.0", memory_mib,
//                            uuid = "GPU-..." (optional)
//   [gpus.health]            optional, after its [[gpus]]: the health signals
//                            NVML would report (GpuHealth), each optional:
//       uncorrected_ecc_errors = 0      retired_pages_pending = false
//       row_remap_pending = false       row_remap_failure = false
//       thermal_slowdown = false        power_brake_slowdown = false
//       hw_slowdown = false             memory_used_mib = 0
//       other_processes = 0             mig_mode = false
//     A key left out is a signal the driver cannot read (simulated GPUs
//     without the table report no health at all).
//   in [[gpus]], optional:   nvlinks = 18 (NVLink links NVML lists, default 0),
//                            nvlinks_active = 18 (of them, active; default all),
//                            pcie = { generation = 5, width = 16,
//                                     max_generation = 5, max_width = 16 }
//                            (as NVML reads it while the GPU is busy)
//   [[links]]                at most one per pair of GPUs, by [[gpus]] position:
//                            gpus = [0, 1], topology = "NV18" (NV<n>, PIX,
//                            PXB, PHB, NODE or SYS), p2p = "ok" (gpu_links.h's
//                            words); a pair not listed is SYS with p2p
//                            "not-supported"
//
// At most kMostFixtureGpus [[gpus]], so at most 2,016 [[links]]; reading is
// linear in the entries and the pairs.  No [[gpus]] and no [driver] is a
// machine without NVIDIA GPUs; GPUs without a [driver] are an error.  Fixture order is CUDA's order.  A GPU without a
// uuid gets a synthetic one that depends only on its position, so the same
// file always gives the same UUIDs (CUDA_VISIBLE_DEVICES can name them).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "gpu/inventory.h"

namespace provision {

// The most GPUs a fixture holds (a [[gpus]] entry past it is an error at its
// position), and so the most [[links]]: one per pair, 2,016 for 64 GPUs.
// More than any NVLink domain of one host; every stage after detection
// handles the pairs of this many GPUs within the README's memory bound.
inline constexpr std::size_t kMostFixtureGpus = 64;

struct GpuFixture {
    Driver driver;
    std::vector<Gpu> gpus;  // every GPU of the machine, in CUDA's order; uuid always set
    HostTopology topology;  // every pair of them, by position; probes() counts the work of reading them
};

// Parses the file; syntax errors throw Error(invalid_input) naming
// file:line:column.
toml::table parse_gpu_fixture_file(const std::string& path);

// Checks and reads a parsed fixture.  `extra_tables` are further top-level
// keys that the caller reads itself (the fake NVML library's [faults]).
// Every error throws Error(invalid_input) naming file:line:column.
GpuFixture read_gpu_fixture(const toml::table& root, const std::string& file,
                            const std::vector<std::string>& extra_tables = {});

// The keys of [gpus.health], in GpuHealth's order.
const std::vector<std::string>& gpu_health_keys();

// A [gpus.health.link_errors] table (`where` names it in errors).
LinkErrorCounts read_link_error_counts(const toml::node& node, const std::string& file, const std::string& where);

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" for the GPU at `position`.
std::string synthetic_gpu_uuid(std::size_t position);

// True for "GPU-" followed by 32 hex digits in the 8-4-4-4-12 grouping.
bool is_gpu_uuid(const std::string& text);

}  // namespace provision
