#include "network/job_shape.h"

#include <fmt/format.h>

namespace provision::network {
namespace {

// The node count and rank one launcher's variables give, if they give a count.
struct Said {
    Launcher launcher;
    std::optional<std::int64_t> nodes;
    std::optional<std::int64_t> rank;
    const char* names;  // for notes
};

// A count of processes over processes per node: nodes, where it divides.
std::optional<std::int64_t> per_node(const std::optional<std::int64_t>& total, const std::optional<std::int64_t>& local,
                                     const char* names, std::vector<std::string>& notes) {
    if (!total || !local) return std::nullopt;
    if (*local <= 0 || *total % *local != 0) {
        notes.push_back(fmt::format("{}: {} processes in all are not a whole number of nodes of {} each; the job is "
                                    "taken to run on one node",
                                    names, *total, *local));
        return std::nullopt;
    }
    return *total / *local;
}

std::optional<std::int64_t> rank_over(const std::optional<std::int64_t>& rank,
                                      const std::optional<std::int64_t>& local) {
    if (!rank || !local || *local <= 0) return std::nullopt;
    return *rank / *local;
}

}  // namespace

std::string_view to_string(Launcher launcher) {
    switch (launcher) {
        case Launcher::none: return "none";
        case Launcher::torchrun: return "torchrun";
        case Launcher::kubeflow: return "kubeflow";
        case Launcher::slurm: return "slurm";
        case Launcher::mpi: return "mpi";
    }
    return "none";
}

JobShape job_shape_of(const LauncherVariables& v) {
    JobShape shape;
    shape.master_addr = v.master_addr;
    for (const std::string& ignored : v.ignored)
        shape.notes.push_back(fmt::format("{} is no whole number: left out of the job's shape", ignored));
    shape.notes.insert(shape.notes.end(), v.notes.begin(), v.notes.end());
    std::vector<Said> said;
    said.push_back({Launcher::kubeflow, v.pet_nnodes, v.pet_node_rank, "PET_NNODES, PET_NODE_RANK"});
    said.push_back({Launcher::torchrun, v.nnodes, v.node_rank, "NNODES, NODE_RANK"});
    said.push_back({Launcher::torchrun,
                    per_node(v.world_size, v.local_world_size, "WORLD_SIZE / LOCAL_WORLD_SIZE", shape.notes),
                    v.group_rank ? v.group_rank : rank_over(v.rank, v.local_world_size),
                    "WORLD_SIZE, LOCAL_WORLD_SIZE, GROUP_RANK"});
    said.push_back({Launcher::slurm, v.slurm_nnodes, v.slurm_nodeid, "SLURM_NNODES, SLURM_NODEID"});
    said.push_back({Launcher::mpi,
                    per_node(v.ompi_world_size, v.ompi_local_size, "OMPI_COMM_WORLD_SIZE / OMPI_COMM_WORLD_LOCAL_SIZE",
                             shape.notes),
                    rank_over(v.ompi_rank, v.ompi_local_size), "OMPI_COMM_WORLD_SIZE, OMPI_COMM_WORLD_RANK"});
    if (v.world_size && !v.local_world_size && *v.world_size > 1)
        shape.notes.push_back(fmt::format("WORLD_SIZE={} without LOCAL_WORLD_SIZE does not say how many nodes the job "
                                          "spans",
                                          *v.world_size));
    for (const Said& one : said) {
        const bool kubeflow = one.launcher == Launcher::kubeflow;
        if (!one.nodes) continue;
        if (*one.nodes < 1 || *one.nodes > kMostNodes) {
            shape.notes.push_back(fmt::format("{}: {} nodes is not a job's size (1 to {}); ignored", one.names,
                                              *one.nodes, kMostNodes));
            continue;
        }
        shape.launcher = one.launcher;
        shape.nodes = static_cast<int>(*one.nodes);
        shape.min_nodes = kubeflow && v.pet_nnodes_min ? static_cast<int>(*v.pet_nnodes_min) : shape.nodes;
        shape.node_rank.reset();
        if (one.rank && *one.rank >= 0 && *one.rank < *one.nodes) {
            shape.node_rank = static_cast<int>(*one.rank);
        } else if (one.rank) {
            shape.notes.push_back(fmt::format("{}: node rank {} is outside 0 to {}; this node's rank is unknown",
                                              one.names, *one.rank, *one.nodes - 1));
        } else if (shape.nodes == 1) {
            shape.node_rank = 0;
        }
        break;
    }
    return shape;
}

}  // namespace provision::network
