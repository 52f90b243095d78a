// Runs the built provision binary in a clean, controlled environment and
// captures what it prints.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace e2e {

struct Result {
    int exit_code = -1;       // the process's exit status, or 128 + signal
    int pid = 0;              // the process's PID
    std::string out;          // stdout
    std::string err;          // stderr
    // With RunOptions::measure, the work the program did, counted by the
    // kernel: the bytes it read with read() and pread() (/proc/PID/io
    // rchar) and its peak resident memory (wait4's ru_maxrss).
    std::uint64_t bytes_read = 0;
    long peak_rss_kib = 0;
    bool killed_by_guard = false;  // still running after RunOptions::kill_after_s, so killed
};

struct RunOptions {
    std::string cwd;          // "" for this process's
    // > 0: a run still going after that many seconds is killed (SIGKILL): a
    // hang guard, so that a defect that makes a run take minutes fails its
    // test instead of stalling the suite.  No time is asserted.
    double kill_after_s = 0;
    // Count bytes read and peak RSS (Result): the program then runs as the
    // child of a small helper, the test binary itself (kMeasuredRun), in its
    // own process group, and Result::pid is the helper's.
    bool measure = false;
    // stdout is a pipe whose reader has gone (closed before the program
    // starts): every write to it fails with EPIPE, or raises SIGPIPE.
    bool broken_stdout = false;
};

// Runs `program args...` with exactly `env` as its environment (plus PATH
// and HOME when not given; without PATH, VIRTUAL_ENV names an empty venv
// too, so provision reads none of this machine's Python packages), from
// `cwd` if not empty.
Result run(const std::string& program, const std::vector<std::string>& args,
           const std::map<std::string, std::string>& env = {}, const std::string& cwd = "");
Result run(const std::string& program, const std::vector<std::string>& args,
           const std::map<std::string, std::string>& env, const RunOptions& options);

// The measured run's helper: `e2e_tests __measured-run PROGRAM ARGS...`
// runs PROGRAM, writes "PEAK_RSS_KIB BYTES_READ" to kMeasureFd and exits
// with its status (128 + N for signal N).  main() hands it these arguments.
constexpr const char* kMeasuredRun = "__measured-run";
constexpr int kMeasureFd = 3;
int measured_run_main(int argc, char** argv);

// What no input may make provision exceed (docs/DESIGN.md, "Reading what
// the workload installed"): checks a measured run's peak RSS against it;
// sanitizer builds, whose allocators and shadow memory change the figure,
// are not held to it.
constexpr long kPeakRssBoundKib = 256 * 1024;
void check_memory_bound(const Result& result);
bool sanitized_build();  // AddressSanitizer is in this build

// The built provision binary.
Result provision(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {});

std::string source_path(const std::string& relative);   // <repo>/<relative>
std::string gpu_fixture(const std::string& name);        // tests/fixtures/gpus/<name>.toml
std::string site_packages(const std::string& name);      // tests/fixtures/site-packages/<name>

// A fresh temporary folder, removed when the object goes away.
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }
    std::string file(const std::string& name) const { return path_ + "/" + name; }

private:
    std::string path_;
};

std::string read_file(const std::string& path);
// Writes `path` (making the folders above it), or throws.
void write_file(const std::string& path, const std::string& contents);

// The JSON report on stdout, parsed (fails the test when it is not JSON).
nlohmann::json report(const Result& result);

// Starts `args` (args[0] looked up on PATH) with PATH=/usr/local/bin:/usr/bin:/bin,
// HOME=/tmp and `env` over them, stdin, stdout and stderr on /dev/null
// (stdout on `stdout_fd` when one is given), and returns its PID at once:
// for tests that signal or watch a running process.
pid_t start(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {},
            int stdout_fd = -1);

// Whether a test that runs provision as PID 1 of a new PID namespace
// (unshare --pid --fork) must be skipped here, saying why: it needs root,
// and a sanitized binary as PID 1 does not finish its exit-time leak check
// (measured: killed after 20 s).
bool skip_unless_provision_can_be_pid_1();

// The report's findings of one signal.
std::vector<nlohmann::json> findings_of(const nlohmann::json& report, const std::string& signal);

// The report's candidate of one mechanism (null where none), and its reasons
// as JSON text ("(no such candidate)" where none).
const nlohmann::json* candidate(const nlohmann::json& report, const std::string& mechanism);
std::string reasons_of(const nlohmann::json& report, const std::string& mechanism);

// Whether `text` contains `part`.
inline bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Sources an env file with `sh` and prints the named variables, one per
// line; used to prove the file is safe and exact.
std::map<std::string, std::string> source_env_file(const std::string& path, const std::vector<std::string>& names);

}  // namespace e2e
