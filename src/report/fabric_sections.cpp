#include "report/fabric_sections.h"

#include <fmt/format.h>

#include "core/text.h"

namespace provision {
namespace {

toml::array gpu_array(const std::vector<int>& gpus) {
    toml::array array;
    for (int gpu : gpus) array.push_back(static_cast<std::int64_t>(gpu));
    return array;
}

std::string channels_words(const ImexChannels& imex) {
    std::size_t usable = 0;
    for (const auto& channel : imex.channels) usable += channel.usable ? 1 : 0;
    if (!imex.major) return "IMEX channels: none listed in /proc/devices";
    return fmt::format("IMEX channels: {} of {} usable", usable, imex.channels.size() + imex.left_out);
}

}  // namespace

toml::table gpu_fabric_table(const GpuFabric& fabric) {
    toml::table table{{"state", std::string(to_string(fabric.state))},
                      {"status", static_cast<std::int64_t>(fabric.status)}};
    table.insert_or_assign("cluster_uuid", fabric.cluster_uuid);
    table.insert_or_assign("clique_id", static_cast<std::int64_t>(fabric.clique_id));
    table.insert_or_assign("version", static_cast<std::int64_t>(fabric.version));
    table.insert_or_assign("health", std::string(to_string(fabric.health)));
    if (fabric.health_mask) table.insert_or_assign("health_mask", static_cast<std::int64_t>(*fabric.health_mask));
    if (!fabric.cliques.empty()) {
        toml::array cliques;
        for (const auto& clique : fabric.cliques)
            cliques.push_back(toml::table{{"type", static_cast<std::int64_t>(clique.type)},
                                          {"id", static_cast<std::int64_t>(clique.id)}});
        table.insert_or_assign("cliques", std::move(cliques));
    }
    return table;
}

toml::table fabric_table(const FabricReport& fabric) {
    toml::table table;
    toml::array cliques;
    for (const auto& clique : fabric.cliques)
        cliques.push_back(toml::table{{"cluster_uuid", clique.cluster_uuid},
                                      {"clique_id", static_cast<std::int64_t>(clique.clique_id)},
                                      {"gpus", gpu_array(clique.gpus)}});
    table.insert_or_assign("cliques", std::move(cliques));
    table.insert_or_assign("job_clique_gpus", static_cast<std::int64_t>(fabric.job_clique_gpus));
    table.insert_or_assign("nccl_checks", fabric.nccl_checks);
    table.insert_or_assign("nccl_checks_reason", fabric.nccl_checks_why);
    toml::table nccl{{"enable", static_cast<std::int64_t>(fabric.settings.enable)},
                     {"enable_set", fabric.settings.enable_set}};
    if (fabric.settings.uuid) nccl.insert_or_assign("uuid", static_cast<std::int64_t>(*fabric.settings.uuid));
    if (fabric.settings.clique_id)
        nccl.insert_or_assign("clique_id", static_cast<std::int64_t>(*fabric.settings.clique_id));
    table.insert_or_assign("nccl_mnnvl", std::move(nccl));
    if (fabric.imex) {
        toml::table imex{{"listed", fabric.imex->major.has_value()}, {"folder", fabric.imex->folder}};
        if (fabric.imex->major) imex.insert_or_assign("major", static_cast<std::int64_t>(*fabric.imex->major));
        toml::array channels;
        for (const auto& channel : fabric.imex->channels) {
            toml::table entry{{"name", channel.name}, {"usable", channel.usable}};
            if (!channel.detail.empty()) entry.insert_or_assign("detail", channel.detail);
            channels.push_back(std::move(entry));
        }
        imex.insert_or_assign("channels", std::move(channels));
        if (fabric.imex->left_out) imex.insert_or_assign("left_out", static_cast<std::int64_t>(fabric.imex->left_out));
        table.insert_or_assign("imex", std::move(imex));
    }
    toml::array handles;
    for (const auto& check : fabric.handles) {
        toml::table entry{{"gpu", static_cast<std::int64_t>(check.gpu)}, {"status", std::string(to_string(check.status))}};
        if (check.cuda_error) entry.insert_or_assign("cuda_error", static_cast<std::int64_t>(check.cuda_error));
        if (!check.detail.empty()) entry.insert_or_assign("detail", check.detail);
        handles.push_back(std::move(entry));
    }
    table.insert_or_assign("handles", std::move(handles));
    if (fabric.proven) table.insert_or_assign("proven", *fabric.proven);
    return table;
}

std::string fabric_line(const FabricReport& fabric) {
    if (!fabric.ran) return {};
    std::string line = fmt::format("multi-node NVLink, clique of {} GPUs", fabric.job_clique_gpus);
    if (fabric.proven) line += *fabric.proven ? "; fabric handles proven" : "; fabric handles FAILED";
    else if (!fabric.nccl_checks) line += fmt::format(" (not checked: {})", fabric.nccl_checks_why);
    if (fabric.imex) line += "; " + channels_words(*fabric.imex);
    return line;
}

std::string explain_fabric(const FabricReport& fabric) {
    if (!fabric.ran) return {};
    std::string out = "  Multi-node NVLink:\n";
    for (const auto& clique : fabric.cliques)
        out += fmt::format("    cluster {} clique {}: GPUs {}\n", clique.cluster_uuid, clique.clique_id,
                           fmt::join(clique.gpus, ", "));
    out += fmt::format("    NCCL's check: {}\n", printable(fabric.nccl_checks_why, 200));
    if (fabric.imex) {
        out += fmt::format("    {}\n", channels_words(*fabric.imex));
        for (const auto& channel : fabric.imex->channels)
            if (!channel.usable) out += fmt::format("      {}: {}\n", channel.name, printable(channel.detail, 200));
    }
    for (const auto& check : fabric.handles)
        out += fmt::format("    GPU {} fabric handle: {} {}\n", check.gpu, to_string(check.status),
                           printable(check.detail, 200));
    return out;
}

}  // namespace provision
