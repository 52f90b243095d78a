#include "report/pod_sections.h"

#include "report/fabric_sections.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/text.h"

namespace provision {

namespace {

// A pair's state as short as a matrix cell.
const char* cell_word(LinkState state) {
    switch (state) {
        case LinkState::ok: return "ok";
        case LinkState::unavailable: return "no-p2p";
        case LinkState::broken: return "BROKEN";
        case LinkState::known_broken: return "broken*";
        case LinkState::slow: return "SLOW";
        case LinkState::not_measured: return "n/m";
        case LinkState::unknown: break;
    }
    return "?";
}

void put_rate(toml::table& table, const std::string& key, double value) {
    if (std::isfinite(value) && value > 0) table.insert_or_assign(key, std::round(value * 10) / 10);
}

const HostCopyResult* host_copy(const PodReport& pod, int gpu) {
    for (const HostCopyResult& copy : pod.host_copies)
        if (copy.gpu == gpu) return &copy;
    return nullptr;
}

}  // namespace

void put_json_null(toml::table& table, const std::string& key) {
    table.insert_or_assign(key, std::numeric_limits<double>::quiet_NaN());
}

void add_gpu_links(toml::table& entry, const Gpu& gpu, const PodReport& pod) {
    if (gpu.nvlinks)
        entry.insert_or_assign("nvlinks", toml::table{{"total", static_cast<std::int64_t>(gpu.nvlinks->total)},
                                                      {"active", static_cast<std::int64_t>(gpu.nvlinks->active)}});
    const HostCopyResult* copy = host_copy(pod, gpu.index);
    if (!gpu.pcie && !copy) return;
    toml::table pcie;
    if (gpu.pcie) {
        pcie.insert_or_assign("generation", static_cast<std::int64_t>(gpu.pcie->generation));
        pcie.insert_or_assign("width", static_cast<std::int64_t>(gpu.pcie->width));
        pcie.insert_or_assign("max_generation", static_cast<std::int64_t>(gpu.pcie->max_generation));
        pcie.insert_or_assign("max_width", static_cast<std::int64_t>(gpu.pcie->max_width));
    }
    if (copy) {
        put_rate(pcie, "h2d_gb_per_s", copy->h2d_gb_per_s);
        put_rate(pcie, "d2h_gb_per_s", copy->d2h_gb_per_s);
    }
    entry.insert_or_assign("pcie", std::move(pcie));
}

void add_gpu_fabric_and_memory(toml::table& entry, const Gpu& gpu, const PodReport& pod) {
    if (gpu.fabric) entry.insert_or_assign("fabric", gpu_fabric_table(*gpu.fabric));
    for (const HostMemoryResult& memory : pod.host_memory) {
        if (memory.gpu != gpu.index) continue;
        toml::table table{{"status", std::string(!memory.measured ? "not-measured" : memory.ok ? "passed" : "failed")},
                          {"numa_node", static_cast<std::int64_t>(memory.numa_node)}};
        if (!memory.detail.empty()) table.insert_or_assign("detail", memory.detail);
        entry.insert_or_assign("nccl_host_memory", std::move(table));
    }
}

std::optional<toml::table> nccl_table(const PodReport& pod) {
    const auto& library = pod.nccl.library;
    if (!library) return std::nullopt;
    toml::table table{{"version", library->version},
                      {"path", library->path},
                      {"source", std::string(to_string(library->source))},
                      {"peer_path", std::string(to_string(pod.nccl.paths.peer))},
                      {"host_memory", std::string(pod.nccl.paths.cumem_host ? "cumem" : "shm")}};
    if (!library->cuda.empty()) table.insert_or_assign("cuda", library->cuda);
    if (const auto& all_reduce = pod.nccl_all_reduce) {
        toml::table entry{{"status", std::string(to_string(all_reduce->status))},
                          {"ranks", static_cast<std::int64_t>(all_reduce->ranks)}};
        if (all_reduce->status == PeerCopyStatus::passed) {
            entry.insert_or_assign("init_ms", std::round(all_reduce->init_ms * 10) / 10);
            entry.insert_or_assign("ms", std::round(all_reduce->ms * 1000) / 1000);
            entry.insert_or_assign("bus_gb_per_s", std::round(all_reduce->bus_gb_per_s * 10) / 10);
        }
        if (!all_reduce->detail.empty()) entry.insert_or_assign("detail", all_reduce->detail);
        if (all_reduce->nodes > 1) entry.insert_or_assign("nodes", static_cast<std::int64_t>(all_reduce->nodes));
        if (!all_reduce->transport.empty()) entry.insert_or_assign("transport", all_reduce->transport);
        table.insert_or_assign("all_reduce", std::move(entry));
    }
    return table;
}

std::string explain_nccl(const PodReport& pod) {
    const auto& library = pod.nccl.library;
    std::string out;
    if (!library) {
        out += "  NCCL: none installed for the workload\n";
    } else {
        const std::string version =
            library->version.empty() ? std::string("version unknown") : fmt::format("{}", echoed(library->version));
        const std::string cuda =
            library->cuda.empty() ? std::string() : fmt::format(", built for CUDA {}", echoed(library->cuda));
        const std::string found_by = library->found_by.empty()
                                         ? std::string()
                                         : fmt::format(", found through {}", echoed_path(library->found_by));
        out += fmt::format("  NCCL: {} ({}{}, {}{})\n", version, to_string(library->source), cuda,
                           echoed_path(library->path), found_by);
    }
    out += fmt::format("    peer memory: {} ({})\n", to_string(pod.nccl.paths.peer), pod.nccl.paths.peer_why);
    out += fmt::format("    host memory: {} ({})\n", pod.nccl.paths.cumem_host ? "cuMem" : "/dev/shm",
                       pod.nccl.paths.host_why);
    if (const auto& all_reduce = pod.nccl_all_reduce)
        out += fmt::format("    all-reduce over {} GPUs{}: {}{}{}{}\n", all_reduce->ranks,
                           all_reduce->nodes > 1 ? fmt::format(" on {} nodes", all_reduce->nodes) : std::string(),
                           to_string(all_reduce->status),
                           all_reduce->status == PeerCopyStatus::passed
                               ? fmt::format(", {:.1f} GB/s bus bandwidth, {:.3f} ms, communicator {:.0f} ms",
                                             all_reduce->bus_gb_per_s, all_reduce->ms, all_reduce->init_ms)
                               : std::string(),
                           all_reduce->detail.empty() ? std::string() : " (" + printable(all_reduce->detail, 256) + ")",
                           all_reduce->transport.empty() ? std::string()
                                                         : fmt::format("; NCCL took {}", all_reduce->transport));
    for (const HostMemoryResult& memory : pod.host_memory) {
        if (!memory.measured) {
            out += fmt::format("    GPU {}: cuMem host memory not measured: {}\n", memory.gpu, memory.detail);
            continue;
        }
        out += fmt::format("    GPU {}: cuMem host memory at NUMA node {} {}{}\n", memory.gpu, memory.numa_node,
                           memory.ok ? "works" : "FAILS", memory.detail.empty() ? std::string() : ": " + memory.detail);
    }
    if (!pod.host.numa_nodes_without_cpus.empty())
        out += fmt::format("    NUMA nodes with memory and no CPUs: {}\n", fmt::join(pod.host.numa_nodes_without_cpus, ", "));
    return out;
}

toml::array links_array(const PodReport& pod) {
    toml::array links;
    for (const LinkReport& link : pod.links) {
        toml::table entry;
        entry.insert_or_assign("gpus", toml::array{link.pair.first, link.pair.second});
        entry.insert_or_assign("topology", link.pair.path_word());
        entry.insert_or_assign("p2p", std::string(to_string(link.pair.p2p)));
        entry.insert_or_assign("state", to_string(link.state));
        if (link.check) {
            toml::table check;
            check.insert_or_assign("status", std::string(to_string(link.check->status)));
            if (link.check->gb_per_s_forward > 0 || link.check->gb_per_s_backward > 0) {
                toml::array rates;
                for (const double rate : {link.check->gb_per_s_forward, link.check->gb_per_s_backward})
                    rates.push_back(std::isfinite(rate) ? std::round(rate * 10) / 10 : 0.0);
                check.insert_or_assign("gb_per_s", std::move(rates));
            }
            if (!link.check->detail.empty()) check.insert_or_assign("detail", link.check->detail);
            if (link.check->status != PeerCopyStatus::skipped || link.check->cuda_peer_access)
                check.insert_or_assign("path", std::string(to_string(link.check->path)));
            if (link.check->failed_path)
                check.insert_or_assign("failed_path", toml::table{{"path", std::string(to_string(*link.check->failed_path))},
                                                                  {"detail", link.check->failed_path_detail}});
            entry.insert_or_assign("check", std::move(check));
        }
        if (link.expected) {
            toml::table expected{{"gb_per_s", std::round(link.expected->gb_per_s * 10) / 10},
                                 {"basis", link.expected->basis}};
            if (link.expected->estimate) expected.insert_or_assign("estimate", true);
            entry.insert_or_assign("expected", std::move(expected));
        }
        links.push_back(std::move(entry));
    }
    return links;
}

toml::table container_table(const ContainerLimits& limits) {
    toml::table table;
    if (limits.shm_bytes) table.insert_or_assign("shm_bytes", static_cast<std::int64_t>(*limits.shm_bytes));
    else put_json_null(table, "shm_bytes");
    table.insert_or_assign("shm_unlimited", limits.shm_unlimited);
    if (limits.memlock_read) {
        if (limits.memlock_bytes) table.insert_or_assign("memlock_bytes", static_cast<std::int64_t>(*limits.memlock_bytes));
        else put_json_null(table, "memlock_bytes");
    }
    toml::array devices;
    for (const auto& device : limits.rdma_devices) devices.push_back(device);
    table.insert_or_assign("rdma_devices", std::move(devices));
    return table;
}

void add_host_facts(toml::table& container, const HostFacts& host) {
    toml::array nodes;
    for (const int node : host.numa_nodes_without_cpus) nodes.push_back(node);
    container.insert_or_assign("numa_nodes_without_cpus", std::move(nodes));
}

std::string peer_access_line(const PodReport& pod) { return pod.peer_access.why; }

std::string explain_pod(const Inventory& inventory, const PodReport& pod) {
    std::string out;
    bool any_gpu_line = false;
    for (const Gpu& gpu : inventory.gpus) {
        std::vector<std::string> facts;
        if (gpu.nvlinks) facts.push_back(fmt::format("NVLinks {} of {} active", gpu.nvlinks->active, gpu.nvlinks->total));
        if (gpu.pcie)
            facts.push_back(fmt::format("PCIe Gen{} x{} (max Gen{} x{})", gpu.pcie->generation, gpu.pcie->width,
                                        gpu.pcie->max_generation, gpu.pcie->max_width));
        if (const HostCopyResult* copy = host_copy(pod, gpu.index))
            facts.push_back(fmt::format("pinned copies {:.1f} GB/s to the GPU, {:.1f} GB/s from it", copy->h2d_gb_per_s,
                                        copy->d2h_gb_per_s));
        if (facts.empty()) continue;
        if (!any_gpu_line) out += "  Links of each GPU:\n";
        any_gpu_line = true;
        out += fmt::format("    GPU {}: {}\n", gpu.index, fmt::join(facts, "; "));
    }
    const std::size_t count = inventory.gpus.size();
    if (count >= 2) {
        // Above the diagonal the path, below it the result, as `nvidia-smi topo -m` lays out a matrix.
        std::vector<std::vector<std::string>> cells(count, std::vector<std::string>(count, "X"));
        for (const LinkReport& link : pod.links) {
            const auto a = static_cast<std::size_t>(link.pair.first), b = static_cast<std::size_t>(link.pair.second);
            cells[a][b] = link.pair.path_word();
            cells[b][a] = cell_word(link.state);
        }
        std::size_t width = 5;
        for (const auto& row : cells)
            for (const auto& cell : row) width = std::max(width, cell.size() + 1);
        out += fmt::format("  Links between GPUs (path above the diagonal, peer copies below):\n{:10}", "");
        for (std::size_t column = 0; column < count; ++column)
            out += fmt::format("{:>{}}", fmt::format("GPU{}", column), width);
        out += "\n";
        for (std::size_t row = 0; row < count; ++row) {
            out += fmt::format("    {:<6}", fmt::format("GPU{}", row));
            for (std::size_t column = 0; column < count; ++column) out += fmt::format("{:>{}}", cells[row][column], width);
            out += "\n";
        }
        out += "    (no-p2p: no peer access, NCCL uses host memory; BROKEN: a copy failed; broken*: known broken by "
               "the recipes, not measured; SLOW: under the recipes' share)\n";
        for (const LinkReport& link : pod.links)
            if (link.check && !link.check->detail.empty() && link.check->status != PeerCopyStatus::skipped)
                out += fmt::format("    GPU {} - GPU {}: {} ({})\n", link.pair.first, link.pair.second,
                                   to_string(link.check->status), printable(link.check->detail, 256));
    }
    out += explain_nccl(pod);
    const ContainerLimits& limits = pod.container;
    out += fmt::format("  Container: /dev/shm {}; RDMA devices: {}{}\n",
                       limits.shm_unlimited ? std::string("without a size limit")
                       : limits.shm_bytes   ? byte_size_words(*limits.shm_bytes)
                                            : std::string("missing"),
                       limits.rdma_devices.empty() ? std::string("none")
                                                   : printable(fmt::format("{}", fmt::join(limits.rdma_devices, ", ")), 1024),
                       !limits.memlock_read   ? std::string()
                       : limits.memlock_bytes ? fmt::format("; RLIMIT_MEMLOCK {}", byte_size_words(*limits.memlock_bytes))
                                              : std::string("; RLIMIT_MEMLOCK unlimited"));
    return out;
}

}  // namespace provision
