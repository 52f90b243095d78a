// run_validation against fake workers: small shell scripts that stand in for
// "provision __check-worker" and sleep, crash, print garbage or answer.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <sys/wait.h>
#include <thread>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "support/proc_file.h"
#include "validate/child_process.h"
#include "validate/validation.h"

using namespace provision;
namespace fs = std::filesystem;

namespace {

class FakeWorker {
public:
    explicit FakeWorker(const std::string& body) {
        std::string pattern = (fs::temp_directory_path() / "provision-fake-worker-XXXXXX").string();
        const int fd = mkstemp(pattern.data());
        REQUIRE(fd >= 0);
        close(fd);
        path_ = pattern;
        std::ofstream(path_) << "#!/bin/sh\n" << body << "\n";
        chmod(path_.c_str(), 0755);
    }
    ~FakeWorker() { fs::remove(path_); }
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

// A file name in the temporary folder (a file, or a folder made in its
// place), removed at the end.
class TempPath {
public:
    TempPath() {
        std::string pattern = (fs::temp_directory_path() / "provision-runner-XXXXXX").string();
        const int fd = mkstemp(pattern.data());
        REQUIRE(fd >= 0);
        close(fd);
        path_ = pattern;
    }
    ~TempPath() { fs::remove_all(path_); }
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

// Says it is ready, then answers every check named on its input with a
// passed result naming its --gpu, then says it is done.
const char* kAnswering = R"(gpu=x
while [ $# -gt 0 ]; do [ "$1" = "--gpu" ] && gpu=$2; shift; done
echo "ready = { at_ns = 1, open_ms = 1.0 }"
while read -r c && [ -n "$c" ]; do
  echo "result = { name = \"$c\", status = \"passed\", max_rel_error = 0.001, tolerance = 0.004, ms = 1.5, tflops = 0.0, detail = \"gpu $gpu\" }"
done
echo "done = { at_ns = 2 }")";

pid_t read_pid(const std::string& path) {
    std::ifstream in(path);
    pid_t pid = 0;
    in >> pid;
    return pid;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// `timeout_s` limits the work and the opening alike, unless `open_s` is given.
ValidationOptions options_for(const FakeWorker& worker, double timeout_s, double open_s = 0) {
    ValidationOptions options;
    options.self_exe = worker.path();
    options.timeout_s = timeout_s;
    options.open_timeout_s = open_s > 0 ? open_s : timeout_s;
    options.worker_processes = 64;  // the fakes stand in for a worker of one GPU each
    return options;
}

}  // namespace

TEST_CASE("runner: results of every GPU's worker come back in order", "[validation][runner]") {
    FakeWorker worker(kAnswering);
    const auto outcomes =
        run_validation({{0, {"attention.bf16", "gemm.tf32"}}, {3, {"attention.fp16"}}}, options_for(worker, 10));
    REQUIRE(outcomes.size() == 3);
    CHECK(outcomes[0].gpu == 0);
    CHECK(outcomes[0].name == "attention.bf16");
    CHECK(outcomes[1].name == "gemm.tf32");
    CHECK(outcomes[2].gpu == 3);
    CHECK(outcomes[2].detail == "gpu 3");
    for (const auto& outcome : outcomes) {
        CHECK(outcome.status == CheckStatus::passed);
        CHECK(outcome.max_rel_error == 0.001);
        CHECK(outcome.ms == 1.5);
    }
}

TEST_CASE("runner: a hung worker is killed at the limit and reported timeout", "[validation][runner]") {
    FakeWorker worker("sleep 30");
    const auto start = std::chrono::steady_clock::now();
    const auto outcomes = run_validation({{0, {"attention.bf16"}}}, options_for(worker, 0.5));
    CHECK(seconds_since(start) < 15);  // killed, not waited for (30 s): a margin no loaded machine uses up
    REQUIRE(outcomes.size() == 1);
    CHECK(outcomes[0].status == CheckStatus::timeout);
}

TEST_CASE("runner: results printed before a hang are kept", "[validation][runner]") {
    FakeWorker worker(R"(echo 'result = { name = "attention.fp16", status = "failed", max_rel_error = 0.5, tolerance = 0.01, ms = 1.0, tflops = 0.0, detail = "wrong" }'
sleep 30)");
    const auto outcomes = run_validation({{0, {"attention.fp16", "gemm.tf32"}}}, options_for(worker, 0.5));
    REQUIRE(outcomes.size() == 2);
    CHECK(outcomes[0].status == CheckStatus::failed);
    CHECK(outcomes[0].max_rel_error == 0.5);
    CHECK(outcomes[1].status == CheckStatus::timeout);
}

TEST_CASE("runner: GPUs run in parallel, each under its own limit", "[validation][runner]") {
    // Each fake worker answers only once all four have started: workers run
    // one after the other would wait for each other until the limit, however
    // fast or slow the machine is.
    TempPath started;
    fs::remove(started.path());
    fs::create_directory(started.path());
    FakeWorker worker(std::string("touch ") + started.path() + "/$$\n" + "while [ $(ls " + started.path() +
                      " | wc -l) -lt 4 ]; do sleep 0.01; done\n" + kAnswering);
    const auto outcomes =
        run_validation({{0, {"gemm.tf32"}}, {1, {"gemm.tf32"}}, {2, {"gemm.tf32"}}, {3, {"gemm.tf32"}}},
                       options_for(worker, 30));
    REQUIRE(outcomes.size() == 4);
    for (const auto& outcome : outcomes) CHECK(outcome.status == CheckStatus::passed);
}

TEST_CASE("runner: a crashing worker is an error that names the signal", "[validation][runner]") {
    FakeWorker worker("echo 'about to fall over' >&2\nkill -SEGV $$");
    const auto outcomes = run_validation({{0, {"attention.bf16"}}}, options_for(worker, 10));
    REQUIRE(outcomes.size() == 1);
    CHECK(outcomes[0].status == CheckStatus::error);
    CHECK(outcomes[0].detail.find("signal 11") != std::string::npos);
    CHECK(outcomes[0].detail.find("about to fall over") != std::string::npos);
}

TEST_CASE("runner: garbage output is an error that quotes it", "[validation][runner]") {
    FakeWorker worker("echo 'this is not TOML {'");
    const auto outcomes = run_validation({{0, {"gemm.tf32"}}}, options_for(worker, 10));
    REQUIRE(outcomes.size() == 1);
    CHECK(outcomes[0].status == CheckStatus::error);
    CHECK(outcomes[0].detail.find("status 0") != std::string::npos);
    CHECK(outcomes[0].detail.find("this is not TOML {") != std::string::npos);
}

TEST_CASE("runner: a worker that cannot start is an error", "[validation][runner]") {
    ValidationOptions options;
    options.self_exe = "/nonexistent/provision";
    const auto outcomes = run_validation({{0, {"gemm.tf32"}}, {1, {"gemm.tf32"}}}, options);
    REQUIRE(outcomes.size() == 2);
    for (const auto& outcome : outcomes) {
        CHECK(outcome.status == CheckStatus::error);
        CHECK(outcome.detail.find("/nonexistent/provision") != std::string::npos);
    }
}

TEST_CASE("runner: the worker sees the mode and the fault spec", "[validation][runner]") {
    FakeWorker worker(R"(echo "result = { name = \"gemm.tf32\", status = \"passed\", detail = \"$*\" }")");
    ValidationOptions options = options_for(worker, 10);
    options.mode = ValidateMode::full;
    options.fault = "gemm.tf32=wrong-result";
    const auto outcomes = run_validation({{5, {"gemm.tf32"}}}, options);
    REQUIRE(outcomes.size() == 1);
    CHECK(outcomes[0].detail == "__check-worker --mode full --gpu 5 --fault gemm.tf32=wrong-result");
}

TEST_CASE("runner: results are taken at 'done', without waiting for the worker to exit", "[validation][runner]") {
    TempPath pid_file;
    FakeWorker worker(std::string("echo $$ > ") + pid_file.path() + "\n" + kAnswering + "\nexec sleep 30");
    const auto outcomes = run_validation({{0, {"gemm.tf32"}}}, options_for(worker, 10));
    REQUIRE(outcomes.size() == 1);
    CHECK(outcomes[0].status == CheckStatus::passed);
    const pid_t pid = read_pid(pid_file.path());
    REQUIRE(pid > 0);
    CHECK(proc::running(pid));  // still "tearing down": not waited for, not killed
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
}

TEST_CASE("runner: the limit counts the worker's own work, not the wait for its checks", "[validation][runner]") {
    SECTION("ready at once, checks sent later: the wait does not count") {
        FakeWorker worker(kAnswering);
        WorkerPool workers(options_for(worker, 2.0, 30));
        workers.keep({{0, {}, {}}});
        std::this_thread::sleep_for(std::chrono::milliseconds(3000));  // provision busy elsewhere, past the limit
        const auto outcomes = workers.run({{0, {"gemm.tf32"}}}).checks;
        REQUIRE(outcomes.size() == 1);
        CHECK(outcomes[0].status == CheckStatus::passed);
        CHECK(workers.ready_at());
    }
    SECTION("still opening its GPU when the opening's limit has passed: killed at once") {
        FakeWorker worker("sleep 60");
        WorkerPool workers(options_for(worker, 30, 0.5));
        workers.keep({{0, {}, {}}});
        std::this_thread::sleep_for(std::chrono::milliseconds(800));
        const auto start = std::chrono::steady_clock::now();
        const auto outcomes = workers.run({{0, {"gemm.tf32"}}}).checks;
        CHECK(seconds_since(start) < 15);  // the work's 30 s limit was not granted on top
        REQUIRE(outcomes.size() == 1);
        CHECK(outcomes[0].status == CheckStatus::timeout);
        CHECK(outcomes[0].detail.find("still opening the GPU") != std::string::npos);
        CHECK_FALSE(workers.ready_at());
    }
}

TEST_CASE("runner: a worker started early and then not needed is stopped", "[validation][runner]") {
    TempPath pid_file;
    FakeWorker worker(std::string("echo $$ > ") + pid_file.path() + "\nexec sleep 30");
    WorkerPool workers(options_for(worker, 10));
    workers.keep({{0, {}, {}}, {1, {}, {}}});
    CHECK(workers.any());
    for (int i = 0; i < 200 && read_pid(pid_file.path()) == 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const pid_t pid = read_pid(pid_file.path());
    REQUIRE(pid > 0);
    const auto outcomes = workers.run({}).checks;  // the selection needs no check
    CHECK(outcomes.empty());
    CHECK_FALSE(workers.any());
    for (int i = 0; i < 200 && proc::running(pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    CHECK_FALSE(proc::running(pid));
}

TEST_CASE("runner: each worker sees only its GPU when a target names it", "[validation][runner]") {
    FakeWorker worker(R"(gpu=x
while [ $# -gt 0 ]; do [ "$1" = "--gpu" ] && gpu=$2; shift; done
read -r c
echo "result = { name = \"$c\", status = \"passed\", detail = \"gpu $gpu visible $CUDA_VISIBLE_DEVICES\" }")");
    WorkerPool workers(options_for(worker, 10));
    workers.keep({{3, "GPU-1b7e3c52", "GPU-1b7e3c52"}});
    const auto outcomes = workers.run({{3, {"gemm.tf32"}}}).checks;
    REQUIRE(outcomes.size() == 1);
    CHECK(outcomes[0].gpu == 3);
    CHECK(outcomes[0].detail == "gpu 0 visible GPU-1b7e3c52");
}

TEST_CASE("children: the whole process group goes at the limit", "[validation][runner]") {
    // The shell's child holds the output pipe open; only a group kill ends it.
    const auto start = std::chrono::steady_clock::now();
    const auto outcomes = run_children({{"/bin/sh", "-c", "sleep 30 & sleep 30; echo never"}}, 0.3);
    CHECK(seconds_since(start) < 15);  // killed, not waited for (30 s)
    REQUIRE(outcomes.size() == 1);
    CHECK(outcomes[0].timed_out);
    CHECK(outcomes[0].signal == 9);
    CHECK(outcomes[0].out.empty());
}

TEST_CASE("children: exit status and both streams are captured", "[validation][runner]") {
    const auto outcomes = run_children({{"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}}, 10);
    REQUIRE(outcomes.size() == 1);
    CHECK_FALSE(outcomes[0].timed_out);
    CHECK(outcomes[0].exit_code == 3);
    CHECK(outcomes[0].out == "out\n");
    CHECK(outcomes[0].err == "err\n");
}
