// The node's labels from a finished or stopped run (publish/node_labels.h),
// the proofs of hardware paths they rest on (publish/hardware_proof.h), and
// the feature file NFD reads.
#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "core/label_rules.h"
#include "publish/hardware_proof.h"
#include "publish/node_labels.h"
#include "publish/publish.h"
#include "publish_test_data.h"
#include "recipe/node_label_names.h"
#include "test_support.h"

using namespace provision;
using namespace publish_test;

namespace {

std::map<std::string, std::string> labels_of(const PublishedRun& run, const std::string& prefix = "provision") {
    std::map<std::string, std::string> labels;
    for (const auto& label : node_labels(run, prefix).labels) {
        CHECK(labels.count(label.key) == 0);  // each once
        labels[label.key] = label.value;
    }
    return labels;
}

CheckOutcome* find_check(Report& report, int gpu, const std::string& name) {
    for (auto& check : report.validation.checks)
        if (check.gpu == gpu && check.name == name) return &check;
    FAIL("no check " << name << " on GPU " << gpu);
    return nullptr;
}

}  // namespace

TEST_CASE("proofs of a hardware path: failed, unsupported, passed, then skipped or unverified") {
    const auto& specs = builtin_recipes().checks;
    Report report = h100_report();
    CHECK(prove({"attention.bf16.wgmma"}, report.inventory, specs, report.validation) == ProofState::passed);
    CHECK(prove({"attention.fp16", "gemm.tf32"}, report.inventory, specs, report.validation) == ProofState::passed);
    CHECK(prove({}, report.inventory, specs, report.validation) == ProofState::unverified);

    Report mixed = h100_report();
    mixed.inventory.gpus.push_back(a100(1));
    pass_every_check(mixed);
    CHECK(prove({"attention.bf16.wgmma"}, mixed.inventory, specs, mixed.validation) == ProofState::unsupported);
    CHECK(prove({"attention.bf16"}, mixed.inventory, specs, mixed.validation) == ProofState::passed);
    find_check(mixed, 1, "attention.bf16")->status = CheckStatus::timeout;
    CHECK(prove({"attention.bf16"}, mixed.inventory, specs, mixed.validation) == ProofState::failed);

    Report simulated = h100_report();
    simulated.validation = {};  // skipped: no outcome at all
    CHECK(prove({"attention.bf16"}, simulated.inventory, specs, simulated.validation) == ProofState::skipped);
    // Out of range is known without running anything.
    simulated.inventory.gpus = {a100(0)};
    CHECK(prove({"attention.bf16.wgmma"}, simulated.inventory, specs, simulated.validation) ==
          ProofState::unsupported);

    // Validation ran, but one check was not among those planned.
    Report partial = h100_report();
    partial.validation.checks.pop_back();
    REQUIRE(partial.validation.status == ValidationStatus::passed);
    CHECK(prove({"attention.fp16", "attention.bf16", "attention.bf16.wgmma", "gemm.tf32"}, partial.inventory, specs,
                partial.validation) == ProofState::unverified);

    Report cpu_only = h100_report();
    cpu_only.inventory.gpus.clear();
    CHECK(prove({"attention.fp16"}, cpu_only.inventory, specs, cpu_only.validation) == ProofState::unsupported);
}

TEST_CASE("labels of an H100 whose every check passed") {
    const Report report = h100_report();
    const auto labels = labels_of(finished(report));
    const std::map<std::string, std::string> expected = {
        {"provision/verdict", "ok"},
        {"provision/validated", "true"},
        {"provision/timestamp", "1795521600"},
        {"provision/validated.timestamp", "1764000000"},
        {"provision/validation", "passed"},
        {"provision/health", "ok"},
        {"provision/action.container", "false"},
        {"provision/action.image", "false"},
        {"provision/action.job", "false"},
        {"provision/action.node", "false"},
        {"provision/action.fleet", "NONE"},
        {"provision/gpu.count", "1"},
        {"provision/gpu.family", "hopper"},
        {"provision/gpu.product", "NVIDIA-H100-80GB-HBM3"},
        {"provision/gpu.compute", "9.0"},
        {"provision/gpu.compute.major", "9"},
        {"provision/gpu.compute.minor", "0"},
        {"provision/driver.version", "580.159.04"},
        {"provision/cuda.driver", "13.0"},
        {"provision/cuda.driver.major", "13"},
        {"provision/cuda.driver.minor", "0"},
        {"provision/attention.flash4", "true"},
        {"provision/attention.flash3", "true"},
        {"provision/attention.flash2", "true"},
        {"provision/attention.flashinfer", "true"},
        {"provision/attention.cudnn", "true"},
        {"provision/attention.sage", "true"},
        {"provision/attention.xformers", "true"},
        {"provision/attention.sdpa", "true"},
        {"provision/attention.flex", "true"},
        {"provision/tf32", "true"},
        {"provision/fp16", "true"},
        {"provision/bf16", "true"},
        {"provision/fp8", "true"},
        {"provision/fp6", "false"},
        {"provision/fp4", "false"},
    };
    CHECK(labels == expected);  // eager has no hardware path to prove: no label
    // The image's choice is no fact about the node.
    for (const auto& [key, value] : labels) CHECK(key.find("mechanism") == std::string::npos);
}

TEST_CASE("labels follow what failed: a check, the health, a GPU outside a path's range") {
    SECTION("the wgmma check failed: flash3 false, validation failed, not validated") {
        Report report = h100_report();
        find_check(report, 0, "attention.bf16.wgmma")->status = CheckStatus::failed;
        report.validation.status = ValidationStatus::failed;
        report.verdict = HealthLevel::degraded;
        const auto labels = labels_of(finished(report));
        CHECK(labels.at("provision/attention.flash3") == "false");
        CHECK(labels.at("provision/attention.flash2") == "true");
        CHECK(labels.at("provision/validated") == "false");
        CHECK(labels.at("provision/fp8") == "true");
        CHECK(labels.at("provision/validation") == "failed");
        CHECK(labels.at("provision/verdict") == "degraded");
    }
    SECTION("checks passed but a GPU is unhealthy (exit 5): failed, and not validated") {
        Report report = h100_report();
        report.findings.push_back({0, 0, "uncorrected_ecc", HealthLevel::failed, "4 uncorrected ECC errors"});
        report.verdict = HealthLevel::failed;
        const auto labels = labels_of(finished(report, ExitCode::validation_failed));
        CHECK(labels.at("provision/validated") == "false");
        CHECK(labels.at("provision/validation") == "passed");
        CHECK(labels.at("provision/health") == "failed");
        CHECK(labels.at("provision/verdict") == "failed");
    }
    SECTION("findings ask the node and the container to act: the strongest node action is the label") {
        Report report = h100_report();
        report.findings.push_back({0, 0, "thermal_slowdown", HealthLevel::degraded, "hot"});
        report.actions.push_back({Actor::node, FleetAction::contact_support, "check the cooling", {}, {}});
        report.findings.push_back({0, 0, "gpu_recovery_reset", HealthLevel::failed, "reset"});
        report.actions.push_back({Actor::node, FleetAction::component_reset, "reset GPU 0", {}, {}});
        report.findings.push_back({-1, -1, "shm_too_small", HealthLevel::degraded, "64 MiB"});
        report.actions.push_back({Actor::container, FleetAction::none, "give /dev/shm 1 GiB", "--shm-size=1g", "..."});
        report.verdict = HealthLevel::failed;
        const auto labels = labels_of(finished(report, ExitCode::validation_failed));
        CHECK(labels.at("provision/action.node") == "true");
        CHECK(labels.at("provision/action.container") == "true");
        CHECK(labels.at("provision/action.image") == "false");
        CHECK(labels.at("provision/action.job") == "false");
        CHECK(labels.at("provision/action.fleet") == "COMPONENT_RESET");
    }
    SECTION("an H100 beside an A100: the node's GPU facts are the A100's, flash3 is not proven") {
        Report report = h100_report();
        report.inventory.gpus.push_back(a100(1));
        pass_every_check(report);
        const auto labels = labels_of(finished(report));
        CHECK(labels.at("provision/gpu.count") == "2");
        CHECK(labels.at("provision/gpu.family") == "ampere");
        CHECK(labels.at("provision/gpu.compute") == "8.0");
        CHECK(labels.at("provision/gpu.product") == "NVIDIA-A100-SXM4-80GB");
        CHECK(labels.at("provision/attention.flash3") == "false");
        CHECK(labels.at("provision/attention.flash2") == "true");
        CHECK(labels.at("provision/validated") == "true");
    }
    SECTION("a CPU-only machine: no GPU facts, no path proven") {
        Report report = h100_report();
        report.inventory.gpus.clear();
        report.inventory.driver = {};
        report.validation = {};
        const auto labels = labels_of(finished(report));
        CHECK(labels.at("provision/gpu.count") == "0");
        for (const char* absent : {"provision/gpu.family", "provision/gpu.compute", "provision/gpu.product",
                                   "provision/driver.version", "provision/cuda.driver"})
            CHECK(labels.count(absent) == 0);
        CHECK(labels.at("provision/attention.sdpa") == "false");
        CHECK(labels.at("provision/validated") == "false");
    }
}

TEST_CASE("p2p: peer access over every pair, worst first; no label without a pair") {
    CHECK(labels_of(finished(h100_report())).count("provision/p2p") == 0);
    Report report = two_h100_report();
    CHECK(labels_of(finished(report)).at("provision/p2p") == "ok");
    struct Row {
        std::vector<LinkState> states;
        std::string expected;
    };
    for (const auto& row : std::vector<Row>{{{LinkState::ok, LinkState::slow}, "slow"},
                                            {{LinkState::unknown, LinkState::unavailable}, "unavailable"},
                                            {{LinkState::unavailable, LinkState::known_broken}, "broken"},
                                            {{LinkState::broken, LinkState::ok}, "broken"},
                                            {{LinkState::ok, LinkState::unknown}, "unknown"}}) {
        report.pod.links.resize(row.states.size(), report.pod.links.front());
        for (std::size_t i = 0; i < row.states.size(); ++i) report.pod.links[i].state = row.states[i];
        CHECK(labels_of(finished(report)).at("provision/p2p") == row.expected);
    }
}

TEST_CASE("a run that stopped before its report says it failed, and nothing it does not know") {
    for (const auto& [code, reason] :
         std::vector<std::pair<ExitCode, std::string>>{{ExitCode::usage, "usage"},
                                                       {ExitCode::invalid_input, "invalid-input"},
                                                       {ExitCode::internal_error, "internal"}}) {
        const auto labels = labels_of(stopped(code));
        const std::map<std::string, std::string> expected = {{"provision/verdict", "failed"},
                                                             {"provision/validated", "false"},
                                                             {"provision/timestamp", "1795521600"},
                                                             {"provision/error", reason}};
        CHECK(labels == expected);
    }
}

TEST_CASE("a hostile GPU name is left out of the labels, with a note, and everything else stays valid") {
    Report report = h100_report();
    const std::string hostile =
        "NVIDIA \"H100\" it's \xc3\xa9t\xc3\xa9 " + std::string(200, 'x') + " $(touch /tmp/x)\n# +no-label";
    report.inventory.gpus[0].name = hostile;
    const NodeLabels labels = node_labels(finished(report), "provision");
    for (const auto& label : labels.labels) {
        INFO(label.key << "=" << label.value);
        CHECK_FALSE(label_key_problem(label.key).has_value());
        CHECK_FALSE(label_value_problem(label.value).has_value());
        CHECK(label.key != "provision/gpu.product");
    }
    REQUIRE(labels.left_out.size() == 1);
    CHECK_THAT(labels.left_out[0], Catch::StartsWith("provision/gpu.product: "));
    // The note, a comment in the file, cannot start a line of its own.
    const std::string file = render_feature_file(labels, finished(report), std::nullopt);
    std::istringstream lines(file);
    int comments = 0;
    for (std::string line; std::getline(lines, line);) {
        if (line.starts_with("#")) {
            ++comments;
            CHECK_FALSE(line.starts_with("# +"));  // NFD reads "# +" as a directive
            continue;
        }
        CHECK(line.find('=') != std::string::npos);
        CHECK(line.find("touch") == std::string::npos);
    }
    CHECK(comments == 3);  // two header lines and the note
}

TEST_CASE("the feature file: a header, the expiry directive when kept fresh, then KEY=VALUE lines") {
    const Report report = h100_report();
    const NodeLabels labels = node_labels(finished(report), "gpu.example.com");
    const std::string once = render_feature_file(labels, finished(report), std::nullopt);
    CHECK(once.find("# +expiry-time=") == std::string::npos);
    CHECK_THAT(once, Catch::Contains("\ngpu.example.com/verdict=ok\n"));
    CHECK(once.back() == '\n');
    const std::string kept = render_feature_file(labels, finished(report), kWhen + std::chrono::seconds(660));
    // The directive precedes every label it applies to.
    const auto directive = kept.find("# +expiry-time=2026-11-24T12:11:00Z\n");
    REQUIRE(directive != std::string::npos);
    CHECK(directive < kept.find("gpu.example.com/"));
}

TEST_CASE("[node_labels] prefix: a user recipe sets it; an empty one, or one Kubernetes would refuse, is exit 3 at "
          "its position when the recipes load") {
    test_support::TempDir dir;
    const std::string good = dir.file("good.toml"), bad = dir.file("bad.toml");
    test_support::write_file(good, "[node_labels]\nprefix = \"gpu.example.com\"\n");
    const RecipeSet set = load_recipes_over_builtins(std::nullopt, {good});
    CHECK(node_label_prefix(&set) == "gpu.example.com");
    test_support::write_file(bad, "# a site's labels\n[node_labels]\nprefix = \"kubernetes.io\"\n");
    std::string message = test_support::malformed_recipe_message({bad});
    CHECK_THAT(message, Catch::StartsWith(bad + ":3:10: [node_labels] prefix \"kubernetes.io\" cannot name Kubernetes "
                                                "labels"));
    CHECK_THAT(message, Catch::Contains("Kubernetes keeps for itself"));
    // Empty is no way to ask for the default.
    test_support::write_file(bad, "[node_labels]\nprefix = \"\"\n");
    CHECK(test_support::malformed_recipe_message({bad}) ==
          bad + ":2:10: [node_labels] prefix \"\" cannot name Kubernetes labels: the prefix is empty");
    test_support::write_file(bad, "[node_labels]\nprefix = \"Gpu_Example\"\n");
    CHECK_THAT(test_support::malformed_recipe_message({bad}),
               Catch::StartsWith(bad + ":2:10: [node_labels] prefix \"Gpu_Example\" cannot name Kubernetes labels: the "
                                       "prefix holds 'G'"));
    test_support::write_file(bad, "[node_labels]\nprefix = 7\n");
    CHECK_THAT(test_support::malformed_recipe_message({bad}),
               Catch::Contains(":2:10: 'prefix' in [node_labels] must be a string"));
    test_support::write_file(bad, "[node_labels]\nprefx = \"a\"\n");
    CHECK_THAT(test_support::malformed_recipe_message({bad}), Catch::Contains("prefix"));
}

TEST_CASE("the names of the labels provision writes itself are those of builtin_label_names(), which no feature "
          "may take") {
    // Every label of a full run (two GPUs, so p2p; every check passed; the
    // network read) and of a stopped one (error).
    Report two = two_h100_report();
    with_network(two);
    with_fabric(two);
    std::set<std::string> written;
    for (const PublishedRun& run : {finished(two), stopped(ExitCode::usage)})
        for (const auto& label : node_labels(run, "provision").labels)
            written.insert(label.key.substr(std::string("provision/").size()));
    std::set<std::string> features;
    for (const auto& [name, spec] : builtin_recipes().features) features.insert(name);
    // The label table's own names are the reserved ones, no more and no fewer.
    std::set<std::string> own;
    for (const auto& name : written)
        if (!features.count(name) && !name.starts_with(kMechanismLabelPrefix)) own.insert(name);
    const auto& reserved = builtin_label_names();
    CHECK(own == std::set<std::string>(reserved.begin(), reserved.end()));
    CHECK(std::any_of(written.begin(), written.end(), [](const std::string& name) {
        return name.starts_with(kMechanismLabelPrefix);
    }));

    // A recipe feature named like one of them is refused where it is defined.
    test_support::TempDir dir;
    const std::string recipe = dir.file("user.toml");
    for (const auto name : reserved) {
        INFO(name);
        test_support::write_file(recipe, fmt::format("# a site's feature\n[features.\"{}\"]\nchecks = []\n", name));
        CHECK(test_support::malformed_recipe_message({recipe}) ==
              fmt::format("{}:2:1: [features.{}]: '{}' is the name of a node label provision writes itself "
                          "(PREFIX/{}): a feature's label is its name, so it would write a second, conflicting {} "
                          "label; choose another name",
                          recipe, name, name, name, name));
    }
    test_support::write_file(recipe, "[features.\"attention.flash3\"]\nchecks = []\n");
    CHECK_THAT(test_support::malformed_recipe_message({recipe}),
               Catch::StartsWith(recipe + ":1:1: [features.attention.flash3]: a feature's name may not begin with "
                                          "'attention.'"));
    // Names that only resemble them are features like any other.
    test_support::write_file(recipe, "[features.validated_fp8]\n[features.p2p_nvlink]\n[features.attention]\n");
    CHECK(test_support::recipe_load_error({test_support::source_path("recipes"), recipe}).empty());
}

TEST_CASE("docs/DESIGN.md's label table names every label provision writes") {
    const std::string design = test_support::read_file(test_support::source_path("docs/DESIGN.md"));
    const auto table = design.find("| label | value | written |");
    REQUIRE(table != std::string::npos);
    // The names in the first column of each row, up to the table's end.
    std::set<std::string> documented;
    std::istringstream lines(design.substr(table, design.find("\n\n", table) - table));
    for (std::string line; std::getline(lines, line);) {
        const std::string first = line.substr(0, line.find(" | ", 2));
        const std::regex name("`([A-Za-z0-9._]+)`");
        for (auto it = std::sregex_iterator(first.begin(), first.end(), name); it != std::sregex_iterator(); ++it)
            documented.insert((*it)[1]);
    }
    REQUIRE(documented.count("attention.MECHANISM") == 1);
    Report two = two_h100_report();
    with_network(two);
    std::vector<NodeLabel> labels = node_labels(finished(two), "provision").labels;
    for (const auto& label : node_labels(stopped(ExitCode::usage), "provision").labels) labels.push_back(label);
    for (const auto& label : labels) {
        const std::string name = label.key.substr(std::string("provision/").size());
        INFO(name);
        CHECK((documented.count(name) == 1 || name.starts_with("attention.")));
    }
}

TEST_CASE("a number format is labelled true only where the report's formats say it passed") {
    Report report = h100_report();
    report.formats.formats[2].state = provision::FormatState::failed;      // fp8's check failed
    report.formats.formats[1].state = provision::FormatState::unverified;  // bf16 not proven
    const auto labels = labels_of(finished(report));
    CHECK(labels.at("provision/fp8") == "false");
    CHECK(labels.at("provision/bf16") == "false");
    CHECK(labels.at("provision/fp16") == "true");
    report.formats.formats.clear();  // a report without formats labels none
    const auto none = labels_of(finished(report));
    CHECK(none.count("provision/fp16") == 0);
}

TEST_CASE("between nodes: an RDMA port NCCL could take, its link layer, GPUDirect RDMA on every GPU", "[network]") {
    Report report = two_h100_report();
    CHECK(labels_of(finished(report)).count("provision/rdma") == 0);  // the network stage did not run
    with_network(report);
    auto labels = labels_of(finished(report));
    CHECK(labels.at("provision/rdma") == "true");
    CHECK(labels.at("provision/rdma.link_layer") == "infiniband");
    CHECK(labels.at("provision/gpudirect") == "false");  // GPU 1's NIC is too far
    report.network->gpudirect.gpus[1].state = provision::network::GpuDirectState::on;
    CHECK(labels_of(finished(report)).at("provision/gpudirect") == "true");
    report.network->taken.clear();
    labels = labels_of(finished(report));
    CHECK(labels.at("provision/rdma") == "false");
    CHECK(labels.count("provision/rdma.link_layer") == 0);
}

TEST_CASE("gpu.clique: one value for the node's one clique; none where its GPUs span several") {
    Report report = two_h100_report();
    with_fabric(report);
    auto labels = node_labels(finished(report), "provision").labels;
    const auto value = [&](const std::string& key) -> std::string {
        for (const auto& label : labels)
            if (label.key == "provision/" + key) return label.value;
        return "(none)";
    };
    CHECK(value("gpu.clique") == "0123456789abcdef0123456789abcdef.7");
    CHECK(value("mnnvl") == "true");
    report.fabric.cliques.push_back({"0123456789abcdef0123456789abcdef", 8, {1}});
    report.fabric.proven = false;
    labels = node_labels(finished(report), "provision").labels;
    CHECK(value("gpu.clique") == "(none)");
    CHECK(value("mnnvl") == "false");
}
