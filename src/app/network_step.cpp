#include "app/network_step.h"

#include <fmt/format.h>

#include "core/text.h"
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
    add_messages(report.messages, Severity::note, job_.notes);
    if (!settings_) return;
    network::NetworkReport network = reading_.get();
    network::judge_network(network, report.inventory, policy, *settings_);
    report.findings.insert(report.findings.end(), network.findings.begin(), network.findings.end());
    add_messages(report.messages, Severity::note, network.notes);
    transport_ = network.transport == network::Transport::ib ? network::ProofTransport::rdma
                                                             : network::ProofTransport::socket;
    report.network = std::move(network);
    clock.mark(Phase::network);
}

NodeMeeting* NetworkStep::meeting(const Options& options, Report& report) {
    if (!job_.spans_nodes() || options.validate != ValidateMode::full) return nullptr;
    const auto& environment = options.process_environment;
    // torchrun's workers each run what they are given: only local rank 0's
    // provision meets the other nodes, the others prove their own GPUs.
    if (const auto local_rank = variable(environment, "LOCAL_RANK");
        local_rank && !local_rank->empty() && *local_rank != "0") {
        report.messages.push_back(Message::note(fmt::format("LOCAL_RANK={}: provision runs in one of torchrun's "
                                                            "workers; only local rank 0's meets the other nodes for "
                                                            "the proof across nodes",
                                                            echoed(*local_rank))));
        return nullptr;
    }
    network::RendezvousConfig config;
    config.master_addr = job_.master_addr;
    config.port = options.rendezvous_port;
    config.nodes = job_.nodes;
    config.min_nodes = job_.min_nodes;
    config.node_rank = job_.node_rank.value_or(-1);
    const std::string master_port = variable(environment, "MASTER_PORT").value_or("");
    const std::string job_id = variable(environment, "TORCHELASTIC_RUN_ID")
                                   .value_or(variable(environment, "SLURM_JOB_ID").value_or(""));
    config.job_key = network::rendezvous_job_key(job_.master_addr, master_port, job_.nodes, job_id);
    config.limit = options.rendezvous_timeout;
    std::string refusal;
    if (config.master_addr.empty()) {
        refusal = "MASTER_ADDR is not set: no node knows where node 0 is";
    } else if (config.node_rank < 0) {
        refusal = "the launcher's variables do not say which node this is";
    } else if (trimmed(master_port) == std::to_string(config.port)) {
        refusal = fmt::format("the rendezvous port {} is the job's MASTER_PORT, which torchrun's store takes: give "
                              "--rendezvous-port (PROVISION_RENDEZVOUS_PORT) another port on every node",
                              config.port);
    } else if (!options.rendezvous_token_file.empty()) {
        std::string why;
        config.token = network::RendezvousToken::read_file(options.rendezvous_token_file, why);
        if (!config.token)
            refusal = fmt::format("the rendezvous token file {} cannot be used: {}; this node does not join without it",
                                  echoed_path(options.rendezvous_token_file), why);
    }
    meeting_ = std::make_unique<JobMeeting>(std::move(config), std::move(refusal), options.proof_timeout, transport_);
    return meeting_.get();
}

void NetworkStep::judge_meeting(Report& report, const HealthPolicy& policy) const {
    if (meeting_) meeting_->judge(report, policy);
}

}  // namespace provision
