#include "app/repeat.h"

#include <sys/wait.h>

#include <cerrno>
#include <cstdio>
#include <exception>
#include <memory>
#include <thread>

#include "app/pipeline.h"
#include "app/publishing.h"
#include "app/stage_settings.h"
#include "app/validation_step.h"
#include "core/terminal.h"
#include "core/process_clock.h"
#include "gpu/xid_events.h"
#include "report/report.h"

namespace provision {
namespace {

using Clock = std::chrono::steady_clock;

// A round that stopped before its report: with --json its line is the
// JSON error document, so every round has one line.
void stop_round(const Options& options, const Error& error, const char* what) {
    print_message(what, error.what());
    if (options.json) {
        std::fputs(render_json_error(static_cast<int>(error.code()), error.what()).c_str(), stdout);
        std::fflush(stdout);
    }
    publish_stopped_run(publish_settings(options), error);
}

// One round: the whole run, its failure published as a stopped run.
void run_round(const Options& options, RoundMemory memory) {
    try {
        (void)carry_out(plan_run(options, memory), options);
    } catch (const Error& error) {
        stop_round(options, error, "error");
    } catch (const std::exception& error) {
        stop_round(options, Error(ExitCode::internal_error, error.what()), "internal error");  // main's exit 1
    }
    std::fflush(stderr);
}

// A round's validation workers, once their results are in, tear their CUDA
// contexts down on their own (the run does not wait for the driver).  Here
// they are waited for, until none is left or `until`: none outlives its
// round holding GPU memory or as a zombie, also when the round took longer
// than the interval.  Between rounds provision has no other child, so any
// child is such a worker.
void reap_workers(Clock::time_point until) {
    for (;;) {
        int status = 0;
        const pid_t pid = ::waitpid(-1, &status, WNOHANG);
        if (pid < 0 && errno == ECHILD) return;
        if (pid > 0 || (pid < 0 && errno == EINTR)) continue;
        if (Clock::now() >= until) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

}  // namespace

std::chrono::seconds labels_lifetime(std::chrono::milliseconds interval) {
    return std::chrono::ceil<std::chrono::seconds>(2 * interval) + std::chrono::seconds(60);
}

void run_repeatedly(const Options& options) {
    Options round = options;
    round.publish.labels_expire_after = labels_lifetime(*options.repeat_interval);
    ProofMemory proofs;  // each GPU's last proof, standing while other processes hold the GPU
    // The Xids raised from now on; those before are the kernel log's to tell.
    std::unique_ptr<XidWatch> xids;
    if (options.gpu_fixture.empty()) xids = std::make_unique<XidWatch>(options.detect.nvml_library);
    for (;;) {
        const auto started = Clock::now();
        round.publish.round_started_ms = ms_since_start(started);
        run_round(round, {&proofs, xids.get()});
        const auto next = started + *options.repeat_interval;
        // A teardown that outlasts the watchdog's limit is left to a later round.
        const auto limit = std::chrono::duration_cast<Clock::duration>(
            std::chrono::duration<double>(options.validate_timeout_s));
        reap_workers(std::max(next, Clock::now() + limit));
        std::this_thread::sleep_until(next);
    }
}

}  // namespace provision
