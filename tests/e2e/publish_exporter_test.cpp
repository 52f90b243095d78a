// provision's metrics served by Debian's real prometheus-node-exporter: its
// textfile collector reads the folder provision writes into, and a scrape
// over HTTP returns provision's families with node_textfile_scrape_error 0.
// The exporter runs unprivileged (as nobody where the test runs as root) on
// a loopback port, with bounded waits, and is always stopped.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "harness.h"
#include "publish_support.h"
#include "support/reliability_record.h"

using e2e::TempDir;
using namespace std::chrono_literals;

namespace {

// The body of GET /metrics, or "" when the exporter does not answer 200.
std::string scrape(int port) {
    const std::string answer = publish_test::http_get(port, "/metrics");
    if (!answer.starts_with("HTTP/1.") || answer.find(" 200 ") == std::string::npos) return "";
    const auto body = answer.find("\r\n\r\n");
    return body == std::string::npos ? "" : answer.substr(body + 4);
}

// Whether `body` holds a sample of `family` with every one of `labels`
// (node-exporter writes a sample's labels sorted by name) and `value`.
bool has_sample(const std::string& body, const std::string& family, const std::vector<std::string>& labels,
                const std::string& value) {
    std::istringstream lines(body);
    for (std::string line; std::getline(lines, line);) {
        if (!line.starts_with(family + "{") || !line.ends_with("} " + value)) continue;
        const std::size_t length = line.size() - family.size() - 3 - value.size();  // between the braces
        const std::string inside = "," + line.substr(family.size() + 1, length) + ",";
        if (std::all_of(labels.begin(), labels.end(),
                        [&](const std::string& label) { return inside.find("," + label + ",") != std::string::npos; }))
            return true;
    }
    return false;
}

// The exporter as another user than root where the test runs as root
// (setpriv, util-linux): it needs no privilege to read the folder.
std::vector<std::string> unprivileged(std::vector<std::string> command) {
    if (::geteuid() != 0 || publish_test::installed("setpriv").empty()) return command;
    command.insert(command.begin(), {publish_test::installed("setpriv"), "--reuid=65534", "--regid=65534",
                                     "--clear-groups", "--"});
    return command;
}

e2e::Result write_metrics(const std::string& folder, const std::string& fixture) {
    return e2e::provision({"--gpu-fixture", e2e::gpu_fixture(fixture), "--site-packages", e2e::site_packages("all"),
                           "--env-file", "/dev/null", "--metrics", folder + "/provision.prom"});
}

}  // namespace

TEST_CASE("node-exporter's textfile collector serves provision's metrics without a scrape error", "[publish]") {
    const std::string exporter = publish_test::installed("prometheus-node-exporter");
    if (exporter.empty()) {
        WARN("skipped: prometheus-node-exporter is not installed (scripts/install-deps installs Debian's package)");
        return;
    }
    TempDir dir;
    const std::string textfiles = dir.file("textfile");
    std::filesystem::create_directory(textfiles);
    // Readable by the exporter's user: the folder (mkdtemp makes it 0700) and the file (0644).
    std::filesystem::permissions(dir.path(), std::filesystem::perms::others_exec | std::filesystem::perms::group_exec,
                                 std::filesystem::perm_options::add);
    REQUIRE(write_metrics(textfiles, "h100").exit_code == 0);

    // A port that was free a moment ago; another process may take it first, so try a few.
    std::unique_ptr<publish_test::Background> node_exporter;
    int port = 0;
    for (int attempt = 0; attempt < 3 && !node_exporter; ++attempt) {
        port = publish_test::free_loopback_port();
        REQUIRE(port > 0);
        auto started = std::make_unique<publish_test::Background>(
            unprivileged({exporter, "--collector.disable-defaults", "--collector.textfile",
                          "--collector.textfile.directory=" + textfiles,
                          fmt::format("--web.listen-address=127.0.0.1:{}", port)}),
            std::map<std::string, std::string>{}, dir.file("node-exporter.log"));
        REQUIRE(started->pid() > 0);
        if (publish_test::wait_for([&] { return !started->running() || !scrape(port).empty(); }, 15s) &&
            started->running())
            node_exporter = std::move(started);
    }
    INFO("node-exporter's log:\n" << e2e::read_file(dir.file("node-exporter.log")));
    REQUIRE(node_exporter);

    std::string body = scrape(port);
    CHECK_THAT(body, Catch::Contains("\nnode_textfile_scrape_error 0\n"));
    CHECK_THAT(body,
               Catch::Contains(fmt::format("node_textfile_mtime_seconds{{file=\"{}/provision.prom\"}}", textfiles)));
    CHECK_THAT(body, Catch::Contains("\nprovision_verdict{verdict=\"ok\"} 1\n"));
    const std::string uuid = "UUID=\"GPU-8932f937-d72c-4106-c12f-20bd9faed9f6\"";
    CHECK(has_sample(body, "provision_gpu_info", {"gpu=\"0\"", uuid, "model_name=\"NVIDIA H100 80GB HBM3\""}, "1"));
    CHECK_THAT(body, Catch::Contains("\nprovision_gpus 1\n"));

    // The next run replaces the file; the next scrape serves it whole.
    REQUIRE(write_metrics(textfiles, "h100-unhealthy").exit_code == 5);
    body = scrape(port);
    CHECK_THAT(body, Catch::Contains("\nnode_textfile_scrape_error 0\n"));
    CHECK_THAT(body, Catch::Contains("\nprovision_verdict{verdict=\"failed\"} 1\n"));
    CHECK(has_sample(body, "provision_finding",
                     {"gpu=\"0\"", uuid, "signal=\"uncorrected_ecc\"", "level=\"failed\""}, "1"));
    // Only provision's file was read: no temporary file was ever seen as one.
    for (const auto& entry : std::filesystem::directory_iterator(textfiles))
        CHECK(entry.path().filename() == "provision.prom");

    CHECK(node_exporter->stop(SIGTERM, 5s).has_value());
    reliability::record("metrics", "Debian's prometheus-node-exporter 1.5 scraping provision's textfile over HTTP, "
                                   "an ok run then a failed one",
                        "provision's families served, node_textfile_scrape_error 0 both times");
}
