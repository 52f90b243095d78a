// The job's and the network's parts of the report (schema in docs/DESIGN.md,
// "Between nodes"): "job" always, "network" where the network stage ran,
// their summary line and --explain's lines.
#pragma once

#include <optional>
#include <string>

#include <toml++/toml.h>

#include "network/job_shape.h"
#include "network/network_report.h"

namespace provision {

// "job": {"nodes", "node_rank" (null where unknown), "launcher"}.
toml::table job_table(const network::JobShape& job);

// "network": what the stage read and decided.
toml::table network_table(const network::NetworkReport& network);

// The summary's "Network:" line; empty where the stage did not run.
std::string network_line(const network::JobShape& job, const std::optional<network::NetworkReport>& network);

// --explain: the interfaces, the route, each RDMA port and each GPU's path to its NIC.
std::string explain_network(const network::NetworkReport& network);

}  // namespace provision
