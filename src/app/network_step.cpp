#include "app/network_step.h"

#include <fmt/format.h>

#include "kernels/fault_injection.h"

namespace provision {
namespace {

std::optional<std::string> variable(const std::map<std::string, std::string>& environment, const char* name) {
    const auto it = environment.find(name);
    return it == environment.end() ? std::nullopt : std::optional<std::string>(it->second);
}

// NCCL's own variables, as NCCL will read them in the workload.
network::NcclNetworkVariables nccl_variables(const std::map<std::string, std::string>& environment) {
    network::NcclNetworkVariables nccl;
    nccl.socket = {variable(environment, "NCCL_SOCKET_IFNAME"), variable(environment, "NCCL_SOCKET_FAMILY"),
                   variable(environment, "NCCL_COMM_ID")};
    nccl.gid = {variable(environment, "NCCL_IB_GID_INDEX"), variable(environment, "NCCL_IB_ADDR_FAMILY"),
                variable(environment, "NCCL_IB_ADDR_RANGE"), variable(environment, "NCCL_IB_ROCE_VERSION_NUM"),
                variable(environment, "NCCL_IB_ROUTABLE_FLID_GID_INDEX")};
    nccl.ib_hca = variable(environment, "NCCL_IB_HCA");
    nccl.ib_disable = variable(environment, "NCCL_IB_DISABLE");
    nccl.net = variable(environment, "NCCL_NET");
    nccl.dmabuf_enable = variable(environment, "NCCL_DMABUF_ENABLE");
    nccl.gdr_level = variable(environment, "NCCL_NET_GDR_LEVEL");
    nccl.gdr_c2c = variable(environment, "NCCL_NET_GDR_C2C");
    nccl.topo_file = variable(environment, "NCCL_TOPO_FILE");
    return nccl;
}

// Where the stage reads: the machine's, or in test builds the stand-ins the
// test hooks name (options.h, TestHooks).
network::NetworkRoots network_roots(const Options& options) {
    network::NetworkRoots roots;
    // NCCL opens NCCL_IBVERBS_LIB where it is set (src/misc/ibvsymbols.cc, buildIbvSymbols).
    if (const auto library = variable(options.process_environment, "NCCL_IBVERBS_LIB"); library && !library->empty())
        roots.ibverbs_library = *library;
    if constexpr (kFaultInjection) {
        const TestHooks& test = options.test;
        if (test.sysfs) roots.sysfs = *test.sysfs;
        if (test.device_folder) roots.dev = *test.device_folder;
        if (test.proc) roots.proc = *test.proc;
        roots.interfaces_file = test.interfaces;
        roots.route_local = test.route;
    }
    return roots;
}

}  // namespace

std::optional<network::NetworkSettings> network_settings(const Options& options, const network::JobShape& job) {
    network::NetworkSettings settings;
    if (job.spans_nodes()) {
        settings.scope = network::NetworkScope::job;
    } else if (!options.publish.node_labels.empty() || !options.publish.metrics.empty()) {
        settings.scope = network::NetworkScope::node_facts;
    } else {
        return std::nullopt;  // one node: nothing between nodes to read
    }
    settings.job = job;
    settings.nccl = nccl_variables(options.process_environment);
    settings.roots = network_roots(options);
    return settings;
}

NetworkStep::NetworkStep(const Options& options)
    : job_(network::job_shape_of(options.launcher)), settings_(network_settings(options, job_)) {
    if (settings_) reading_ = network::start_network_reading(*settings_);
}

void NetworkStep::finish(Report& report, const HealthPolicy& policy, PhaseClock& clock) {
    report.job = job_;
    report.notes.insert(report.notes.end(), job_.notes.begin(), job_.notes.end());
    if (!settings_) return;
    network::NetworkReport network = reading_.get();
    network::judge_network(network, report.inventory, policy, *settings_);
    report.findings.insert(report.findings.end(), network.findings.begin(), network.findings.end());
    report.notes.insert(report.notes.end(), network.notes.begin(), network.notes.end());
    report.network = std::move(network);
    clock.mark(Phase::network);
}

MeetNodes NetworkStep::meeting(const Options& options) {
    if (!job_.spans_nodes() || options.validate != ValidateMode::full) return {};
    network::RendezvousConfig config;
    config.master_addr = job_.master_addr;
    config.port = options.rendezvous_port;
    config.nodes = job_.nodes;
    config.node_rank = job_.node_rank.value_or(-1);
    const auto& environment = options.process_environment;
    const std::string job_id = variable(environment, "TORCHELASTIC_RUN_ID")
                                   .value_or(variable(environment, "SLURM_JOB_ID").value_or(""));
    config.job_key = network::rendezvous_job_key(job_.master_addr, variable(environment, "MASTER_PORT").value_or(""),
                                                 job_.nodes, job_id);
    config.limit = options.rendezvous_timeout;
    meeting_ = config;
    return [this](int local_ranks, const MakeNcclId& make_id, std::string& why) -> std::optional<JobRanks> {
        network::RendezvousConfig config = *meeting_;
        config.local_ranks = local_ranks;
        network::RendezvousOutcome outcome;
        if (config.master_addr.empty()) {
            outcome.detail = "MASTER_ADDR is not set: no node knows where node 0 is";
        } else if (config.node_rank < 0) {
            outcome.detail = "the launcher's variables do not say which node this is";
        } else {
            outcome = network::rendezvous(config, make_id);
        }
        met_ = outcome;
        if (outcome.status != network::RendezvousStatus::joined) {
            why = fmt::format("the nodes did not meet ({}: {})", to_string(outcome.status), outcome.detail);
            return std::nullopt;
        }
        return JobRanks{outcome.id, outcome.ranks, outcome.first_rank, config.nodes};
    };
}

void NetworkStep::judge_meeting(Report& report, const HealthPolicy& policy) const {
    if (!met_ || !meeting_) return;
    if (report.network) {
        network::RendezvousOutcome kept = *met_;
        kept.id.clear();  // the communicator's, of no use after it
        report.network->rendezvous = kept;
    }
    if (auto finding = network::rendezvous_finding(*met_, *meeting_, policy)) report.findings.push_back(*finding);
}

}  // namespace provision
