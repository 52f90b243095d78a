// Runs the built provision binary in a clean, controlled environment and
// captures what it prints.
#pragma once

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
    // Work the process did, counted by the kernel: bytes it read with read()
    // and pread() (/proc/PID/io rchar, its waited-for children included),
    // and its peak resident memory (wait4's ru_maxrss).
    std::uint64_t bytes_read = 0;
    long peak_rss_kib = 0;
    bool killed_by_guard = false;  // still running after `kill_after_s`, so killed
};

// Runs `program args...` with exactly `env` as its environment (plus PATH
// and HOME when not given; without PATH, VIRTUAL_ENV names an empty venv
// too, so provision reads none of this machine's Python packages), from
// `cwd` if not empty.  With `kill_after_s` > 0, a run still going after
// that many seconds is killed (SIGKILL): a hang guard, so that a defect that
// makes a run take minutes fails its test instead of stalling the suite.
Result run(const std::string& program, const std::vector<std::string>& args,
           const std::map<std::string, std::string>& env = {}, const std::string& cwd = "",
           double kill_after_s = 0);

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
void write_file(const std::string& path, const std::string& contents);

// The JSON report on stdout, parsed (fails the test when it is not JSON).
nlohmann::json report(const Result& result);

// Sources an env file with `sh` and prints the named variables, one per
// line; used to prove the file is safe and exact.
std::map<std::string, std::string> source_env_file(const std::string& path, const std::vector<std::string>& names);

}  // namespace e2e
