#include "validate/validation.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <csignal>
#include <iostream>

#include "validate/child_process.h"
#include "validate/fault_injection.h"
#include "validate/worker_outcome.h"
#include "validate/worker_protocol.h"
#include "validation_kernels.h"

namespace provision {

std::vector<CheckOutcome> run_validation(const std::vector<GpuChecks>& work, const ValidationOptions& options) {
    std::vector<std::vector<std::string>> commands;
    for (const GpuChecks& job : work) {
        std::vector<std::string> command = {options.self_exe};
        for (auto& arg : worker_arguments(job, options)) command.push_back(std::move(arg));
        commands.push_back(std::move(command));
    }
    const std::vector<ChildOutcome> children = run_children(commands, options.timeout_s);
    std::vector<CheckOutcome> outcomes;
    for (std::size_t i = 0; i < work.size(); ++i)
        for (auto& outcome : outcomes_from_worker(work[i], children[i], options.timeout_s))
            outcomes.push_back(std::move(outcome));
    return outcomes;
}

namespace {

CheckStatus status_of(kernels::CheckStatus status) {
    switch (status) {
        case kernels::CheckStatus::passed: return CheckStatus::passed;
        case kernels::CheckStatus::failed: return CheckStatus::failed;
        case kernels::CheckStatus::unsupported: return CheckStatus::unsupported;
        case kernels::CheckStatus::error: break;
    }
    return CheckStatus::error;
}

// Test-only faults of the worker process itself, with or without the CUDA
// kernels: "crash" dies of SIGSEGV as a fault in the driver would take it
// down, "killed" of SIGKILL as the OOM killer would.  The runner must
// contain both.
void die_for_fault(const std::string& fault) {
    if (fault == "crash") {
        std::signal(SIGSEGV, SIG_DFL);  // past any handler a sanitizer installed
        std::raise(SIGSEGV);
    }
    if (fault == "killed") std::raise(SIGKILL);
}

}  // namespace

int run_check_worker(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
    CLI::App app{"provision's validation worker: runs one GPU's checks"};
    int gpu = 0;
    std::string mode = "quick";
    std::string fault;
    unsigned seed = 0;
    std::vector<std::string> checks;
    app.add_option("--gpu", gpu, "CUDA index of the GPU")->required();
    app.add_option("--mode", mode, "quick or full")->check(CLI::IsMember({"quick", "full"}));
    if constexpr (kFaultInjection) app.add_option("--fault", fault, "test-only: PATTERN=FAULT[,...]");
    app.add_option("--seed", seed, "seed of the random inputs (0: a fresh one)");
    app.add_option("checks", checks, "check names")->required();
    try {
        std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
        app.parse(reversed);
    } catch (const CLI::ParseError& error) {
        err << fmt::format("provision __check-worker: {}\n", error.what());
        return 2;
    }
    for (const std::string& name : checks) {
        kernels::CheckOptions check_options;
        check_options.seed = seed;
        check_options.full = parse_validate_mode(mode) == ValidateMode::full;
        check_options.fault = fault_for_check(fault, name);
        die_for_fault(check_options.fault);
        const kernels::CheckResult result = kernels::run_check(gpu, name, check_options);
        CheckOutcome outcome{gpu,          result.name, status_of(result.status), result.max_rel_error,
                             result.tolerance, result.ms,   result.tflops,            result.detail};
        out << format_result_line(outcome) << '\n' << std::flush;  // survives a later kill
    }
    return 0;
}

int check_worker_main(const std::vector<std::string>& args) { return run_check_worker(args, std::cout, std::cerr); }

}  // namespace provision
