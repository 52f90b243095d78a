// The run's metrics in Prometheus' text format (publish/metrics.h): the
// structure node-exporter's textfile collector needs, escaping, values.
// (promtool's own verdict on real runs is in tests/e2e/publish_test.cpp.)
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "health/actions.h"
#include "publish/metrics.h"
#include "publish_test_data.h"
#include "test_support.h"

using namespace provision;
using namespace publish_test;

namespace {

struct Family {
    std::string help, type;
    std::vector<std::string> samples;  // whole lines
};

// Reads the text format strictly: HELP then TYPE before a family's samples,
// families not interleaved, two fields per sample (no timestamp); the only
// other comment is "# left out: ...".
std::map<std::string, Family> parse(const std::string& text) {
    static const std::regex help(R"(# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) (.+))");
    static const std::regex type(R"(# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (gauge|counter))");
    static const std::regex sample(
        R"(([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\.)*",?)*\})? (\S+))");
    std::map<std::string, Family> families;
    std::string current;
    std::istringstream lines(text);
    std::smatch match;
    for (std::string line; std::getline(lines, line);) {
        INFO(line);
        if (std::regex_match(line, match, help)) {
            current = match[1];
            REQUIRE(families.count(current) == 0);  // one HELP per family, families not interleaved
            families[current].help = match[2];
        } else if (std::regex_match(line, match, type)) {
            REQUIRE(match[1] == current);
            families[current].type = match[2];
        } else if (line.starts_with("# left out: ")) {
            continue;  // a repeated label set, said in a comment
        } else {
            REQUIRE(std::regex_match(line, match, sample));
            REQUIRE(match[1] == current);
            REQUIRE_FALSE(families[current].type.empty());
            families[current].samples.push_back(line);
        }
    }
    CHECK(text.back() == '\n');
    return families;
}

// The families docs/DESIGN.md's metrics table lists.
std::set<std::string> documented_families() {
    const std::string design = test_support::read_file(test_support::source_path("docs/DESIGN.md"));
    std::set<std::string> documented;
    const std::regex row(R"(\n\| `(provision_[a-z_]+)` \|)");
    for (auto it = std::sregex_iterator(design.begin(), design.end(), row); it != std::sregex_iterator(); ++it)
        documented.insert((*it)[1]);
    return documented;
}

}  // namespace

TEST_CASE("label values are escaped as the text format wants, and always UTF-8") {
    CHECK(escape_label_value("NVIDIA H100 80GB HBM3") == "NVIDIA H100 80GB HBM3");
    CHECK(escape_label_value("a\"b\\c\nd") == "a\\\"b\\\\c\\nd");
    CHECK(escape_label_value("GeForce\xc2\xae RTX") == "GeForce\xc2\xae RTX");  // ®
    CHECK(escape_label_value("bad\xff byte") == "bad\xef\xbf\xbd byte");       // U+FFFD
    CHECK(escape_label_value("esc\x1b[2J") == "esc\xef\xbf\xbd[2J");
    CHECK(escape_label_value("c1\xc2\x9b") == "c1\xef\xbf\xbd");
}

TEST_CASE("sample values read back as the same number; NaN and infinities as Prometheus writes them") {
    for (const double value : {0.0, 1.0, 0.0031, 412.5, 2.895e14, 1e-9, 1795521600.0}) {
        const std::string text = sample_value(value);
        CHECK(std::strtod(text.c_str(), nullptr) == value);
    }
    CHECK(sample_value(1.0) == "1");
    CHECK(sample_value(std::nan("")) == "NaN");
    CHECK(sample_value(HUGE_VAL) == "+Inf");
    CHECK(sample_value(-HUGE_VAL) == "-Inf");
}

TEST_CASE("metrics of an H100 whose every check passed") {
    Report report = h100_report();
    report.findings.push_back({0, 0, "thermal_slowdown", HealthLevel::degraded, "hot"});
    report.findings.push_back({-1, -1, "cuda_compat_libs", HealthLevel::degraded, "compat"});
    report.actions.push_back({Actor::node, FleetAction::contact_support, "check the node's cooling", {}, {}});
    report.actions.push_back({Actor::image, FleetAction::none, "take the compat folder off the path", {}, {}});
    const auto families = parse(render_metrics(finished(report)));
    const std::string gpu0 = "gpu=\"0\",UUID=\"GPU-8932f937-d72c-4106-c12f-20bd9faed9f0\"";
    auto has = [&](const std::string& family, const std::string& line) {
        INFO(family << ": " << line);
        REQUIRE(families.count(family) == 1);
        const auto& samples = families.at(family).samples;
        CHECK(std::find(samples.begin(), samples.end(), line) != samples.end());
    };
    has("provision_info", "provision_info{version=\"" PROVISION_VERSION "\",recipes_digest=\"c5c36ae71f20\","
                          "driver_version=\"580.159.04\",cuda_driver_version=\"13.0\",mechanism=\"sdpa\","
                          "workload=\"generic\"} 1");
    has("provision_verdict", "provision_verdict{verdict=\"ok\"} 1");
    has("provision_verdict", "provision_verdict{verdict=\"failed\"} 0");
    has("provision_validated", "provision_validated 1");
    has("provision_exit_code", "provision_exit_code 0");
    has("provision_last_run_timestamp_seconds", "provision_last_run_timestamp_seconds 1795521600");
    has("provision_validation_status", "provision_validation_status{status=\"passed\"} 1");
    has("provision_validation_duration_seconds", "provision_validation_duration_seconds 0.412");
    has("provision_gpus", "provision_gpus 1");
    has("provision_gpu_info", "provision_gpu_info{" + gpu0 +
                                  ",model_name=\"NVIDIA H100 80GB HBM3\",architecture=\"hopper\",family=\"hopper\","
                                  "compute_capability=\"9.0\"} 1");
    has("provision_health_level", "provision_health_level{level=\"degraded\"} 1");
    has("provision_findings", "provision_findings{level=\"degraded\"} 2");
    has("provision_findings", "provision_findings{level=\"failed\"} 0");
    has("provision_finding", "provision_finding{" + gpu0 + ",signal=\"thermal_slowdown\",level=\"degraded\"} 1");
    has("provision_finding", "provision_finding{signal=\"cuda_compat_libs\",level=\"degraded\"} 1");
    has("provision_finding_action", "provision_finding_action{" + gpu0 +
                                        ",signal=\"thermal_slowdown\",actor=\"node\",fleet_action=\"CONTACT_SUPPORT\"} 1");
    has("provision_finding_action",
        "provision_finding_action{signal=\"cuda_compat_libs\",actor=\"image\",fleet_action=\"NONE\"} 1");
    has("provision_attention_path", "provision_attention_path{mechanism=\"flash3\",state=\"passed\"} 1");
    has("provision_attention_path", "provision_attention_path{mechanism=\"flash3\",state=\"failed\"} 0");
    has("provision_feature", "provision_feature{feature=\"tf32\",state=\"passed\"} 1");
    has("provision_check_status", "provision_check_status{" + gpu0 + ",check=\"gemm.tf32\",status=\"passed\"} 1");
    has("provision_check_status", "provision_check_status{" + gpu0 + ",check=\"gemm.tf32\",status=\"timeout\"} 0");
    has("provision_check_max_relative_error",
        "provision_check_max_relative_error{" + gpu0 + ",check=\"attention.bf16\"} 0.0031");
    has("provision_check_duration_seconds",
        "provision_check_duration_seconds{" + gpu0 + ",check=\"attention.bf16\"} 0.0019");
    has("provision_check_throughput_flops",
        "provision_check_throughput_flops{" + gpu0 + ",check=\"gemm.tf32\"} 289500000000000");
    // The phases count from the run's start: here the process's.
    const auto& phases = families.at("provision_phase_end_seconds").samples;
    REQUIRE(phases.size() == 2);
    CHECK_THAT(phases[0], Catch::StartsWith("provision_phase_end_seconds{phase=\"recipes\"} "));
    CHECK_THAT(phases[1], Catch::StartsWith("provision_phase_end_seconds{phase=\"total\"} "));
    // Only the check that measured throughput has a figure.
    CHECK(families.at("provision_check_throughput_flops").samples.size() == 1);
    for (const auto& [name, family] : families) {
        INFO(name);
        CHECK(family.type == "gauge");
        CHECK_FALSE(name.ends_with("_total"));
    }
}

TEST_CASE("links: each pair's state, the measured peer and host bandwidths in bytes per second") {
    const Report report = two_h100_report();
    const auto families = parse(render_metrics(finished(report)));
    const auto& states = families.at("provision_link_state").samples;
    CHECK(states.size() == 7);
    CHECK(std::count(states.begin(), states.end(),
                     "provision_link_state{gpu=\"0\",peer_gpu=\"1\",path=\"NV18\",state=\"ok\"} 1") == 1);
    CHECK(families.at("provision_link_bandwidth_bytes_per_second").samples ==
          std::vector<std::string>{
              "provision_link_bandwidth_bytes_per_second{gpu=\"0\",peer_gpu=\"1\"} 371200000000",
              "provision_link_bandwidth_bytes_per_second{gpu=\"1\",peer_gpu=\"0\"} 370800000000"});
    // A direction not measured (0) is left out.
    const auto& host = families.at("provision_host_copy_bandwidth_bytes_per_second").samples;
    CHECK(host.size() == 3);
    CHECK(host.at(0) == "provision_host_copy_bandwidth_bytes_per_second{gpu=\"0\",UUID=\"GPU-8932f937-d72c-4106-"
                        "c12f-20bd9faed9f0\",direction=\"host_to_device\"} 52100000000");
}

TEST_CASE("each GPU's link error counters and recovery action, as far as the driver reads them") {
    Report report = two_h100_report();
    auto& first = report.inventory.gpus[0].health;
    first.link_errors.nvlink_replay = 3;
    first.link_errors.nvlink_crc = 0;
    first.link_errors.pcie_replays = 41;
    first.recovery_action = RecoveryAction::gpu_reset;
    const auto families = parse(render_metrics(finished(report)));
    const std::string gpu0 = "gpu=\"0\",UUID=\"" + report.inventory.gpus[0].uuid + "\"";
    // GPU 1's driver read none: no sample says 0 for it.
    CHECK(families.at("provision_gpu_link_errors").samples ==
          std::vector<std::string>{"provision_gpu_link_errors{" + gpu0 + ",counter=\"nvlink_replay\"} 3",
                                   "provision_gpu_link_errors{" + gpu0 + ",counter=\"nvlink_crc\"} 0",
                                   "provision_gpu_link_errors{" + gpu0 + ",counter=\"pcie_replays\"} 41"});
    const auto& actions = families.at("provision_gpu_recovery_action").samples;
    CHECK(actions.size() == 6);
    CHECK(std::count(actions.begin(), actions.end(),
                     "provision_gpu_recovery_action{" + gpu0 + ",action=\"gpu-reset\"} 1") == 1);
    CHECK(std::count(actions.begin(), actions.end(),
                     "provision_gpu_recovery_action{" + gpu0 + ",action=\"none\"} 0") == 1);
}

TEST_CASE("a --repeat round's phases count from the round's start") {
    const Report report = h100_report();
    PublishedRun run = finished(report);
    run.phases_from_ms = report.timings.phases().front().ms;  // the round began when its recipes were read
    const auto phases = parse(render_metrics(run)).at("provision_phase_end_seconds").samples;
    CHECK(phases.at(0) == "provision_phase_end_seconds{phase=\"recipes\"} 0");
    const double total = std::strtod(phases.at(1).substr(phases.at(1).rfind(' ')).c_str(), nullptr);
    CHECK(total == Approx(0.25));
}

TEST_CASE("a run that stopped before its report: the families it knows, failed") {
    const auto families = parse(render_metrics(stopped(ExitCode::invalid_input)));
    CHECK(families.size() == 5);
    CHECK(families.at("provision_verdict").samples.at(2) == "provision_verdict{verdict=\"failed\"} 1");
    CHECK(families.at("provision_exit_code").samples.at(0) == "provision_exit_code 3");
    CHECK(families.at("provision_validated").samples.at(0) == "provision_validated 0");
    CHECK(families.count("provision_gpus") == 0);  // not known
}

TEST_CASE("a hostile GPU name stays inside its label value") {
    Report report = h100_report();
    report.inventory.gpus[0].name = "GPU\"} 1\nprovision_validated 1\n\xff";
    const std::string text = render_metrics(finished(report));
    const auto families = parse(text);  // still one sample a line
    CHECK(families.at("provision_validated").samples.size() == 1);
    CHECK_THAT(text, Catch::Contains("model_name=\"GPU\\\"} 1\\nprovision_validated 1\\n\xef\xbf\xbd\""));
}

TEST_CASE("docs/DESIGN.md lists every metric family provision writes, and no other") {
    Report report = two_h100_report();
    with_network(report);
    with_fabric(report);
    report.findings.push_back({0, 0, "thermal_slowdown", HealthLevel::degraded, "hot"});
    report.actions.push_back({Actor::node, FleetAction::contact_support, "check the node's cooling", {}, {}});
    report.validation.busy.push_back({1, "1 other process holds 79000 MiB of its memory", 1764000000});
    report.inventory.gpus[0].health.recovery_action = RecoveryAction::none;
    report.inventory.gpus[0].health.link_errors.pcie_replays = 0;
    std::set<std::string> written;
    for (const auto& [name, family] : parse(render_metrics(finished(report)))) written.insert(name);
    CHECK(written == documented_families());
}

TEST_CASE("provision_number_format: one state set per format, as the report's formats judge it") {
    Report report = h100_report();
    report.formats.formats[2].state = provision::FormatState::failed;
    const auto samples = parse(render_metrics(finished(report))).at("provision_number_format").samples;
    CHECK(samples.size() == 5 * 5);  // five formats, five states each
    CHECK(std::count(samples.begin(), samples.end(),
                     "provision_number_format{format=\"fp8\",state=\"failed\"} 1") == 1);
    CHECK(std::count(samples.begin(), samples.end(),
                     "provision_number_format{format=\"fp8\",state=\"passed\"} 0") == 1);
    CHECK(std::count(samples.begin(), samples.end(),
                     "provision_number_format{format=\"bf16\",state=\"passed\"} 1") == 1);
}

TEST_CASE("no family repeats a label set in a run with many findings alike; provision_finding counts them") {
    Report report = two_h100_report();
    report.validation.checks[0].status = CheckStatus::failed;
    report.validation.checks[1].status = CheckStatus::timeout;
    using L = HealthLevel;
    report.findings = {
        // Alike, without a GPU: three packages built for another Python, two extensions for another torch.
        {-1, -1, "python_mismatch", L::degraded, "flash_attn 2.8.3 is built for Python 3.10"},
        {-1, -1, "python_mismatch", L::degraded, "sageattention 2.2.0 is built for Python 3.10"},
        {-1, -1, "python_mismatch", L::degraded, "xformers 0.0.32 is built for Python 3.10"},
        {-1, -1, "torch_abi_mismatch", L::degraded, "flash_attn needs c10 symbols"},
        {-1, -1, "torch_abi_mismatch", L::degraded, "xformers was built for torch 2.7"},
        // Alike on one GPU, and the same signal without a GPU and at another level.
        {1, 1, "no_kernel_image", L::degraded, "flash_attn has no code for GPU 1"},
        {1, 1, "no_kernel_image", L::degraded, "sageattention has no code for GPU 1"},
        {-1, -1, "no_kernel_image", L::degraded, "vllm's kernels have no code for any GPU"},
        {-1, -1, "no_kernel_image", L::failed, "torch has no code for any GPU"},
        // One each.
        {0, 0, "thermal_slowdown", L::degraded, "hot"},
        {1, 1, "thermal_slowdown", L::degraded, "hot"},
        {-1, -1, "cuda_compat_libs", L::degraded, "compat"},
        {-1, 3, "gpu_lost", L::failed, "GPU 3 fell off the bus"},
        {-1, -1, "shm_too_small", L::ok, "64 MiB"},
    };
    report.actions = actions_for(report.findings, ActionFacts{});  // alike findings ask alike
    report.validation.busy.push_back({1, "1 other process holds 79000 MiB of its memory", 1764000000});
    report.inventory.gpus[1].health.recovery_action = RecoveryAction::drain_p2p;
    report.inventory.gpus[1].health.link_errors.nvlink_crc = 12;
    with_network(report);
    with_fabric(report);
    report.verdict = L::failed;
    const auto families = parse(render_metrics(finished(report)));
    // Every family is written, and none repeats a label set.
    std::set<std::string> written;
    for (const auto& [name, family] : families) written.insert(name);
    CHECK(written == documented_families());
    for (const auto& [name, family] : families) {
        std::set<std::string> label_sets;
        for (const auto& sample : family.samples) {
            INFO(sample);
            CHECK(label_sets.insert(sample.substr(0, sample.rfind(' '))).second);
        }
    }
    // Alike findings are one sample counting them.
    const auto& findings = families.at("provision_finding").samples;
    auto sample = [&](const std::string& labels) {
        const std::string start = "provision_finding{" + labels + "} ";
        for (const auto& line : findings)
            if (line.starts_with(start)) return line.substr(start.size());
        return std::string("none");
    };
    const std::string gpu1 = "gpu=\"1\",UUID=\"GPU-8932f937-d72c-4106-c12f-20bd9faed9f1\"";
    CHECK(sample("signal=\"python_mismatch\",level=\"degraded\"") == "3");
    CHECK(sample("signal=\"torch_abi_mismatch\",level=\"degraded\"") == "2");
    CHECK(sample(gpu1 + ",signal=\"no_kernel_image\",level=\"degraded\"") == "2");
    CHECK(sample("signal=\"no_kernel_image\",level=\"degraded\"") == "1");
    CHECK(sample("signal=\"no_kernel_image\",level=\"failed\"") == "1");
    CHECK(sample(gpu1 + ",signal=\"thermal_slowdown\",level=\"degraded\"") == "1");
    CHECK(sample("signal=\"gpu_lost\",level=\"failed\"") == "1");
    CHECK(findings.size() == 10);
    // The samples of each level add up to provision_findings, which counts the report's findings.
    for (const auto& [level, count] : std::map<std::string, int>{{"ok", 1}, {"degraded", 11}, {"failed", 2}}) {
        INFO(level);
        double sum = 0;
        for (const auto& line : findings)
            if (line.find("level=\"" + level + "\"") != std::string::npos)
                sum += std::strtod(line.substr(line.rfind(' ') + 1).c_str(), nullptr);
        CHECK(sum == count);
        const auto& totals = families.at("provision_findings").samples;
        CHECK(std::find(totals.begin(), totals.end(),
                        fmt::format("provision_findings{{level=\"{}\"}} {}", level, count)) != totals.end());
    }
}

TEST_CASE("between nodes: the transport, each RDMA port, each GPU's GPUDirect RDMA, the job's nodes", "[network]") {
    Report report = two_h100_report();
    report.job.nodes = 4;
    report.job.launcher = provision::network::Launcher::slurm;
    with_network(report);
    const auto families = parse(render_metrics(finished(report)));
    auto samples = [&](const std::string& family) {
        REQUIRE(families.count(family) == 1);
        return families.at(family).samples;
    };
    CHECK(samples("provision_job_nodes") == std::vector<std::string>{"provision_job_nodes{launcher=\"slurm\"} 4"});
    CHECK(samples("provision_network_transport") ==
          std::vector<std::string>{"provision_network_transport{transport=\"ib\"} 1",
                                   "provision_network_transport{transport=\"socket\"} 0"});
    CHECK(samples("provision_rdma_port_active") ==
          std::vector<std::string>{
              "provision_rdma_port_active{device=\"mlx5_0\",port=\"1\",link_layer=\"InfiniBand\"} 1",
              "provision_rdma_port_active{device=\"mlx5_0\",port=\"2\",link_layer=\"InfiniBand\"} 0"});
    CHECK(samples("provision_rdma_port_rate_bytes_per_second") ==
          std::vector<std::string>{
              "provision_rdma_port_rate_bytes_per_second{device=\"mlx5_0\",port=\"1\"} 50000000000"});
    const auto gdr = samples("provision_gpudirect_rdma");
    CHECK(gdr.size() == 10);  // two GPUs, five states each
    CHECK(std::find(gdr.begin(), gdr.end(),
                    "provision_gpudirect_rdma{gpu=\"1\",UUID=\"GPU-8932f937-d72c-4106-c12f-20bd9faed9f1\","
                    "state=\"too-far\"} 1") != gdr.end());
}

TEST_CASE("a host of hundreds of RDMA ports: at most 64 samples a family", "[network]") {
    Report report = h100_report();
    with_network(report);
    auto& ports = report.network->rdma.devices[0].ports;
    ports[1].rate_gbps = 400;  // every port with a rate
    while (ports.size() < 300) {
        auto port = ports.front();
        port.number = static_cast<int>(ports.size()) + 1;
        ports.push_back(port);
    }
    const auto families = parse(render_metrics(finished(report)));
    CHECK(families.at("provision_rdma_port_active").samples.size() == 64);
    CHECK(families.at("provision_rdma_port_rate_bytes_per_second").samples.size() == 64);
}

TEST_CASE("label values alike once escaped: one sample, the repeat left out with a comment", "[network]") {
    Report report = h100_report();
    with_network(report);
    auto& devices = report.network->rdma.devices;
    devices[0].ports.resize(1);
    for (const std::string name : {"bad\xff", "bad\xfe", "ctl\x01", "ctl\x02"}) {
        auto device = devices[0];
        device.name = name;
        devices.push_back(device);
    }
    const std::string text = render_metrics(finished(report));
    const auto families = parse(text);
    for (const auto& [name, family] : families) {
        INFO(name);
        std::set<std::string> series;
        for (const auto& sample : family.samples) CHECK(series.insert(sample.substr(0, sample.rfind(' '))).second);
    }
    CHECK(families.at("provision_rdma_port_active").samples.size() == 3);  // mlx5_0, bad\uFFFD, ctl\uFFFD
    CHECK_THAT(text, Catch::Contains("# left out: provision_rdma_port_active{device=\"bad\xef\xbf\xbd\",port=\"1\","));
    CHECK_THAT(text, Catch::Contains("# left out: provision_rdma_port_active{device=\"ctl\xef\xbf\xbd\",port=\"1\","));
}

TEST_CASE("multi-node NVLink: each clique's GPUs, and whether fabric handles were proven") {
    Report report = two_h100_report();
    with_fabric(report);
    auto families = parse(render_metrics(finished(report)));
    REQUIRE(families.at("provision_fabric_clique").samples.size() == 1);
    CHECK(families.at("provision_fabric_clique").samples[0] ==
          "provision_fabric_clique{cluster_uuid=\"0123456789abcdef0123456789abcdef\",clique_id=\"7\"} 2");
    CHECK(families.at("provision_mnnvl_proven").samples[0] == "provision_mnnvl_proven 1");
    report.fabric.proven.reset();  // not checked: no sample
    families = parse(render_metrics(finished(report)));
    CHECK(families.count("provision_mnnvl_proven") == 0);
}
