// provision: detect the GPUs, choose an attention mechanism, prove it on the
// GPU, write the env settings, and hand off to the workload.  The story of a
// run: read the command line, plan the run, carry it out (the report, the
// env file, the handoff); every error lands here, in one place, as the exit
// status.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "app/command_line.h"
#include "app/options.h"
#include "app/pipeline.h"
#include "app/publishing.h"
#include "app/repeat.h"
#include "app/stage_settings.h"
#include "core/error.h"
#include "core/terminal.h"
#include "core/termination.h"
#include "report/report.h"
#include "worker/worker_main.h"

namespace {

using provision::ExitCode;

void print_json_error(int exit_code, const std::string& message) {
    std::fputs(provision::render_json_error(exit_code, message).c_str(), stdout);
    std::fflush(stdout);
}

// An error no stage expected (std::bad_alloc, a bug): the same one place
// reports it, on stderr and with --json as the JSON error document, and the
// exit status is 1; the labels and metrics say the run failed.  The memory
// the failed work held is freed by now.
int internal_error(bool json, const char* what, const provision::Options& options) {
    const std::string message = fmt::format("internal error: {}", what);
    provision::print_message("", message);
    try {
        if (json) print_json_error(static_cast<int>(ExitCode::internal_error), message);
        provision::publish_stopped_run(provision::publish_settings(options), provision::Error(ExitCode::internal_error, message));
    } catch (...) {
        // Not even that fits: stderr has said it.
    }
    return static_cast<int>(ExitCode::internal_error);
}

}  // namespace

int main(int argc, char** argv) {
    // The validation child: runs one GPU's checks, nothing else.
    if (argc > 1 && std::string(argv[1]) == "__check-worker") {
        const int status = provision::check_worker_main(std::vector<std::string>(argv + 2, argv + argc));
        // The results are out; skip the CUDA runtime's teardown at exit
        // (destroying the context costs about 100 ms on an H100, and the
        // parent waits for it).  The driver frees everything with the process.
        std::cout.flush();
        std::fflush(nullptr);
        std::_Exit(status);
    }
    provision::install_termination_handlers();
    const std::vector<std::string> arguments(argv + 1, argv + argc);
    // --json decides the error's form even when reading the command line fails.
    const bool json = provision::wants_json(arguments);
    provision::Options options;
    try {
        if (provision::read_command_line(arguments, options) == provision::CommandLineOutcome::answered) return 0;
        provision::remove_published_files_at_termination(options.publish);
        if (options.repeat_interval) provision::run_repeatedly(options);
        return provision::carry_out(provision::plan_run(options), options);
    } catch (const provision::Error& error) {
        provision::print_message("error", error.what());
        // Exits 2 and 3 come before any report; later failures (exec) follow one.
        // --print-recipes makes no report: any failure of its own is the document.
        const bool before_report = error.code() == ExitCode::usage || error.code() == ExitCode::invalid_input;
        if (json && (before_report || options.print_recipes_folder))
            print_json_error(static_cast<int>(error.code()), error.what());
        if (before_report) provision::publish_stopped_run(provision::publish_settings(options), error);
        return static_cast<int>(error.code());
    } catch (const std::exception& error) {
        return internal_error(json, error.what(), options);
    } catch (...) {
        return internal_error(json, "an unknown exception", options);
    }
}
