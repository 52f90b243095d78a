// How many nodes the job spans and which one this is, from the launcher's
// own variables (decoded by the settings table, src/app/settings.cpp, into
// LauncherVariables).  First launcher that says, wins:
//   kubeflow  PET_NNODES, PET_NODE_RANK (Kubeflow's PyTorchJob and
//             TrainJob set them for torchrun, which reads them as its
//             --nnodes and --node-rank); PET_NNODES may be "MIN:MAX"
//   torchrun  NNODES, NODE_RANK (the names torchrun's --nnodes and
//             --node-rank take in launch scripts), else the variables
//             torchrun gives its workers: WORLD_SIZE / LOCAL_WORLD_SIZE
//             nodes, GROUP_RANK (else RANK / LOCAL_WORLD_SIZE) this node
//   slurm     SLURM_NNODES (else SLURM_JOB_NUM_NODES), SLURM_NODEID
//   mpi       OMPI_COMM_WORLD_SIZE / OMPI_COMM_WORLD_LOCAL_SIZE nodes,
//             OMPI_COMM_WORLD_RANK / OMPI_COMM_WORLD_LOCAL_SIZE this node
//             (Open MPI's default placement, by slot)
// MASTER_ADDR (else PET_MASTER_ADDR) is where the job meets.  Nothing set:
// one node, launcher "none".
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace provision::network {

// A count or a rank a launcher gave, as the settings table decoded it.
struct LauncherVariables {
    std::optional<std::int64_t> pet_nnodes;          // PET_NNODES ("N", or the MAX of "MIN:MAX")
    std::optional<std::int64_t> pet_nnodes_min;      // the MIN of "MIN:MAX" (1 to MAX)
    std::optional<std::int64_t> pet_node_rank;       // PET_NODE_RANK
    std::optional<std::int64_t> nnodes;              // NNODES
    std::optional<std::int64_t> node_rank;           // NODE_RANK
    std::optional<std::int64_t> world_size;          // WORLD_SIZE
    std::optional<std::int64_t> local_world_size;    // LOCAL_WORLD_SIZE
    std::optional<std::int64_t> group_rank;          // GROUP_RANK
    std::optional<std::int64_t> rank;                // RANK
    std::optional<std::int64_t> slurm_nnodes;        // SLURM_NNODES, else SLURM_JOB_NUM_NODES
    std::optional<std::int64_t> slurm_nodeid;        // SLURM_NODEID
    std::optional<std::int64_t> ompi_world_size;     // OMPI_COMM_WORLD_SIZE
    std::optional<std::int64_t> ompi_local_size;     // OMPI_COMM_WORLD_LOCAL_SIZE
    std::optional<std::int64_t> ompi_rank;           // OMPI_COMM_WORLD_RANK
    std::string master_addr;                         // MASTER_ADDR, else PET_MASTER_ADDR; "" when neither
    std::vector<std::string> ignored;                // "RANK=abc": set, but no whole number (left out)
    std::vector<std::string> notes;                  // what else did not add up (an elastic MIN)
};

enum class Launcher { none, torchrun, kubeflow, slurm, mpi };
std::string_view to_string(Launcher launcher);

struct JobShape {
    int nodes = 1;
    int min_nodes = 1;                 // an elastic job's fewest nodes (PET_NNODES=MIN:MAX); else `nodes`
    std::optional<int> node_rank = 0;  // empty where the launcher does not say (or says something impossible)
    Launcher launcher = Launcher::none;
    std::string master_addr;
    std::vector<std::string> notes;  // what did not add up, for the report's warnings

    bool spans_nodes() const { return nodes > 1; }
};

// The most nodes a job is taken to span: more is read as a mistake.
constexpr std::int64_t kMostNodes = 1 << 20;

JobShape job_shape_of(const LauncherVariables& variables);

}  // namespace provision::network
