// TERM, INT and HUP stop provision promptly in every phase before the
// handoff, also as PID 1 (where a signal without a handler is ignored), and
// leave no temporary file; the workload then starts with default signal
// handling.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include "harness.h"
#include "net/local_http_server.h"
#include "support/reliability_record.h"

using e2e::TempDir;
using e2e::start;
using Clock = std::chrono::steady_clock;

namespace {

// A stop the signal caused, not the fetch's 30 s limit: the figure the
// tests print is the measure, this bound only tells the two apart, with a
// margin no loaded machine uses up.
constexpr double kStoppedBound = 10.0;

struct Stopped {
    int status = -1;     // exit status, or 128 + signal
    double seconds = 0;  // from the signal to the exit
};

// Sends `signal` to `target` after `delay`, then waits (at most 20 s) for `pid`.
Stopped signal_and_wait(pid_t pid, pid_t target, int signal, std::chrono::milliseconds delay) {
    std::this_thread::sleep_for(delay);
    const auto sent = Clock::now();
    ::kill(target, signal);
    Stopped stopped;
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
        if (Clock::now() - sent > std::chrono::seconds(20)) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    stopped.seconds = std::chrono::duration<double>(Clock::now() - sent).count();
    stopped.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    return stopped;
}

std::vector<std::string> fetching_args(const TempDir& dir, const std::string& url) {
    return {PROVISION_BINARY, "--gpu-fixture", e2e::gpu_fixture("h100"), "--site-packages",
            e2e::site_packages("all"), "--no-validate", "--env-file", dir.file(".env_settings"), "--recipe", url,
            "--allow-http", "--fetch-timeout", "30"};
}

}  // namespace

TEST_CASE("TERM, INT and HUP during a fetch from a server that never answers stop provision at once, not at the fetch's limit") {
    net_test::LocalHttpServer server([](const net_test::Request&) { return net_test::stall(); });
    for (const int signal : {SIGTERM, SIGINT, SIGHUP}) {
        TempDir dir;
        const std::string tmp = dir.file("tmp");
        std::filesystem::create_directory(tmp);
        const pid_t pid = start(fetching_args(dir, server.url("/recipe.toml")),
                                {{"PROVISION_CACHE_DIR", dir.file("cache")}, {"TMPDIR", tmp}});
        const Stopped stopped = signal_and_wait(pid, pid, signal, std::chrono::milliseconds(500));
        INFO(strsignal(signal) << ": " << stopped.seconds << " s");
        CHECK(stopped.status == 128 + signal);
        CHECK(stopped.seconds < kStoppedBound);
        CHECK_FALSE(std::filesystem::exists(dir.file(".env_settings")));
        CHECK(std::filesystem::is_empty(tmp));
        if (signal == SIGTERM) {
            std::printf("SIGTERM during a stalled fetch: provision stopped %.1f ms after the signal\n",
                        stopped.seconds * 1000);
        }
    }
    reliability::record("signals", "SIGTERM, SIGINT, SIGHUP while fetching from a server that never answers",
                        "exit 128 + signal at once (the time is printed), not at the 30 s fetch limit; no env file, no temporary file", "the run (by design)");
}

TEST_CASE("SIGTERM at any moment of a run writing a large env file leaves no temporary file") {
    TempDir dir;
    // Close to the 1 MiB recipe limit: 9,000 variables of 100 bytes.
    std::string recipe = "[workloads.generic.env]\n";
    for (int i = 0; i < 9000; ++i) recipe += fmt::format("V{} = \"{}\"\n", i, std::string(100, 'v'));
    e2e::write_file(dir.file("big.toml"), recipe);
    const std::string out = dir.file("out");
    std::filesystem::create_directory(out);
    int stopped_by_signal = 0;
    for (int delay_ms = 0; delay_ms <= 300; delay_ms += 15) {
        const pid_t pid = start({PROVISION_BINARY, "--gpu-fixture", e2e::gpu_fixture("h100"), "--site-packages",
                                 e2e::site_packages("all"), "--no-validate", "--recipe", dir.file("big.toml"),
                                 "--env-file", out + "/.env_settings"},
                                {});
        const Stopped stopped = signal_and_wait(pid, pid, SIGTERM, std::chrono::milliseconds(delay_ms));
        INFO("SIGTERM after " << delay_ms << " ms");
        CHECK((stopped.status == 143 || stopped.status == 0));
        if (stopped.status == 143) ++stopped_by_signal;
        // Only the env file itself (complete) may be there, never a temporary one.
        for (const auto& entry : std::filesystem::directory_iterator(out))
            CHECK(entry.path().filename() == ".env_settings");
    }
    CHECK(stopped_by_signal > 0);
    reliability::record("signals", "SIGTERM at 21 moments of runs writing a 1 MiB env file",
                        "exit 143 or a finished run; never a temporary file left; the env file old or whole");
}

TEST_CASE("as PID 1 (unshare --pid --fork), SIGTERM during a stalled fetch stops provision at once") {
    if (e2e::skip_unless_provision_can_be_pid_1()) return;
    net_test::LocalHttpServer server([](const net_test::Request&) { return net_test::stall(); });
    TempDir dir;
    // unshare forks; its child execs provision, which is PID 1 of the new namespace.
    std::vector<std::string> args = {"unshare", "--pid", "--fork", "--kill-child"};
    const auto inner = fetching_args(dir, server.url("/recipe.toml"));
    args.insert(args.end(), inner.begin(), inner.end());
    const pid_t unshare_pid = start(args, {{"PROVISION_CACHE_DIR", dir.file("cache")}});
    // provision is unshare's only child; find its PID (outside the namespace).
    pid_t provision_pid = 0;
    for (int attempt = 0; attempt < 200 && provision_pid == 0; ++attempt) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        const std::string children_file = fmt::format("/proc/{0}/task/{0}/children", unshare_pid);
        if (std::filesystem::exists(children_file)) {
            const std::string children = e2e::read_file(children_file);
            if (!children.empty()) provision_pid = std::stoi(children);
        }
    }
    REQUIRE(provision_pid > 0);
    const std::string status = e2e::read_file(fmt::format("/proc/{}/status", provision_pid));
    CHECK_THAT(status, Catch::Contains("NSpid:\t" + std::to_string(provision_pid) + "\t1"));  // PID 1 inside
    const Stopped stopped = signal_and_wait(unshare_pid, provision_pid, SIGTERM, std::chrono::milliseconds(500));
    INFO(stopped.seconds << " s");
    CHECK(stopped.seconds < kStoppedBound);
    CHECK(stopped.status == 143);
    std::printf("SIGTERM to provision as PID 1 during a stalled fetch: stopped %.1f ms after the signal\n",
                stopped.seconds * 1000);
    reliability::record("signals", "SIGTERM to provision as PID 1 (unshare --pid --fork) during a stalled fetch",
                        "exit 143 at once (the time is printed)", "the run (by design)");
}

TEST_CASE("the workload starts with default signal handling, even when provision was started with TERM ignored") {
    TempDir dir;
    // provision inherits an ignored TERM (as from `nohup` or a careless
    // parent); the workload then sends itself TERM: with the disposition
    // passed on it would live on and print.
    std::string command = "trap '' TERM; exec \"$0\"";
    const std::vector<std::string> inner = {"--gpu-fixture", e2e::gpu_fixture("h100"), "--site-packages",
                                            e2e::site_packages("all"), "--no-validate", "--env-file",
                                            dir.file(".env_settings"), "--", "/bin/sh", "-c",
                                            "kill -TERM $$; sleep 1; echo survived"};
    for (const auto& arg : inner)
        command += " '" + arg + "'";
    const auto result = e2e::run("/bin/sh", {"-c", command, PROVISION_BINARY});
    INFO(result.err);
    CHECK(result.exit_code == 143);
    CHECK(result.out.empty());
    reliability::record("signals", "provision started with SIGTERM ignored; the workload sends itself SIGTERM",
                        "default dispositions and an empty mask restored before exec: the workload ends (143)");
}

TEST_CASE("a single run stopped by a signal leaves no labels or metrics, before or after it published", "[publish]") {
    // Each run is held where the test can see it: before its report, by a
    // server that never answers its recipe's request; after publishing, by
    // a stdout pipe too small for the JSON report, which nobody reads.
    std::atomic<int> requests{0};
    net_test::LocalHttpServer server([&](const net_test::Request&) {
        ++requests;
        return net_test::stall();
    });
    for (const bool published : {false, true}) {
        TempDir dir;
        const std::string labels = dir.file("features.d/provision"), metrics = dir.file("provision.prom");
        std::filesystem::create_directories(dir.file("features.d"));
        // An earlier run's files, which this run replaces.
        e2e::write_file(labels, "provision/verdict=ok\nprovision/validated=true\n");
        e2e::write_file(metrics, "provision_validated 1\nprovision_exit_code 0\n");
        std::vector<std::string> args = {PROVISION_BINARY, "--gpu-fixture", e2e::gpu_fixture("8x-h100"),
                                         "--site-packages", e2e::site_packages("all"), "--no-validate",
                                         "--env-file", dir.file(".env"), "--node-labels", labels, "--metrics",
                                         metrics, "--json"};
        int out[2] = {-1, -1};
        REQUIRE(::pipe2(out, O_CLOEXEC) == 0);
        const int capacity = ::fcntl(out[1], F_SETPIPE_SZ, 4096);
        REQUIRE(capacity > 0);
        if (!published)
            args.insert(args.end(), {"--allow-http", "--fetch-timeout", "3600", "--recipe", server.url("/recipe.toml")});
        const int before = requests.load();
        const pid_t pid = start(args, {{"PROVISION_CACHE_DIR", dir.file("cache")}}, out[1]);
        ::close(out[1]);
        INFO((published ? "after publishing, writing its report" : "before its report, fetching a recipe"));
        // Held: the server has the request, or the pipe is full.
        auto held = [&] {
            int queued = 0;
            if (published) return ::ioctl(out[0], FIONREAD, &queued) == 0 && queued >= capacity;
            return requests.load() > before;
        };
        const auto deadline = Clock::now() + std::chrono::seconds(20);
        while (!held() && Clock::now() < deadline) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        CHECK(held());
        const Stopped stopped = signal_and_wait(pid, pid, SIGTERM, std::chrono::milliseconds(0));
        ::close(out[0]);
        CHECK(stopped.status == 143);
        CHECK_FALSE(std::filesystem::exists(labels));
        CHECK_FALSE(std::filesystem::exists(metrics));
        CHECK(std::filesystem::is_empty(dir.file("features.d")));
    }
    reliability::record("node labels",
                        "SIGTERM to a single run with --node-labels and --metrics over an earlier run's "
                        "validated=true: while it fetches a recipe, and after it published (writing its report)",
                        "exit 143; both files removed (the earlier run's, or those the run wrote): no claim "
                        "outlives a run that could not finish",
                        "the labels and metrics (by design)");
}
