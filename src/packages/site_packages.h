// Which Python distributions are installed, read from site-packages folders
// without starting Python.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace provision {

struct InstalledPackage {
    std::string name;      // as METADATA writes it
    std::string version;   // as METADATA writes it; may not be valid PEP 440
    std::string location;  // the .dist-info / .egg-info path
};

// A metadata folder that looked like a distribution but does not count.
struct SkippedPackage {
    std::string name;  // PEP 503 normalised, from the folder's name
    std::string location;
    std::string reason;  // "no METADATA file", "METADATA names 'numpy', not 'torch'" ...
};

// The cuDNN the workload's torch loads, as its files tell: the version of
// the nvidia-cudnn wheel torch depends on, or the one a library's file name
// carries (libcudnn.so.9.10.2 of a system install).
struct CudnnInstall {
    std::string version;   // "9.13.0.50"
    std::string evidence;  // "nvidia-cudnn-cu13 9.13.0.50", "the file name libcudnn.so.9.10.2"
    std::string path;      // the dist-info folder or the library
};

class PackageIndex {
public:
    // Later additions with an already known (normalised) name are kept in
    // packages() but never found: the first one wins, as on sys.path.
    void add(InstalledPackage package);
    // By PEP 503 normalised name; the pointer is valid until the next add().
    const InstalledPackage* find(std::string_view name) const;
    const std::vector<InstalledPackage>& packages() const { return packages_; }
    // Why a metadata folder for `name` did not count (unreadable METADATA,
    // another name inside, no Version), or nullptr when none was met.
    const SkippedPackage* skipped_for(std::string_view name) const;
    // Installed twice or more (two site-packages folders, or two dist-info
    // folders of different versions): every copy after the one that counts.
    std::vector<const InstalledPackage*> shadowed() const;

    // An installed distribution the workload cannot import (built for another
    // Python, ...): it is found, but mechanisms needing it are refused with `why`.
    void mark_unusable(std::string_view name, std::string why);
    // Why the distribution cannot be used; nullptr when it can (or is not installed).
    const std::string* unusable_reason(std::string_view name) const;
    // The distribution's device code was read from its modules (and judged):
    // recipes' assumptions about what it was built for give way.
    void mark_device_code_read(std::string_view name);
    bool device_code_read(std::string_view name) const;
    // The cuDNN torch loads, once the compiled-code stage has read it.
    void set_cudnn(CudnnInstall cudnn) { cudnn_ = std::move(cudnn); }
    const std::optional<CudnnInstall>& cudnn() const { return cudnn_; }

    std::vector<std::string> searched_dirs;  // every folder asked for, in order
    std::vector<std::string> missing_dirs;   // those that could not be read
    std::vector<std::pair<std::string, std::string>> unreadable_dirs;  // existing but unreadable: folder, why
    std::vector<SkippedPackage> skipped;

private:
    std::vector<InstalledPackage> packages_;
    std::unordered_map<std::string, std::size_t> first_by_name_;
    std::unordered_map<std::string, std::string> unusable_;  // normalised name -> why
    std::vector<std::string> device_code_read_;              // normalised names
    std::optional<CudnnInstall> cudnn_;
};

// Reads every NAME-VERSION.dist-info (METADATA) and NAME-VERSION.egg-info
// (a folder with PKG-INFO, or the older single file) in `dirs`, in order,
// each folder's entries sorted by name.  A distribution counts only when
// its metadata names it (PEP 503) and has a Version; missing folders are
// skipped silently (listed in missing_dirs).
PackageIndex scan_site_packages(const std::vector<std::string>& dirs);

// glob(3) each pattern ("/workspace/venv/lib/python3*/site-packages", '~'
// allowed) and keep the existing folders: patterns in order, the matches of
// one pattern sorted, each folder once.
std::vector<std::string> expand_site_package_globs(const std::vector<std::string>& patterns);

}  // namespace provision
