#include "packages/site_packages.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <unordered_set>

#include <dirent.h>
#include <glob.h>
#include <sys/stat.h>

#include <fmt/format.h>

#include "packages/metadata.h"
#include "packages/package_name.h"

namespace provision {
namespace {

constexpr std::string_view kDistInfo = ".dist-info";
constexpr std::string_view kEggInfo = ".egg-info";

struct MetadataEntry {
    std::string file_name;  // "torch-2.11.0.dist-info"
    unsigned char type;     // d_type: DT_DIR, DT_REG, or DT_UNKNOWN / DT_LNK when stat must tell
};

// Whether the folder "NAME-VERSION..." belongs to the distribution `name`.
// Wheels and setuptools escape '-' in NAME to '_', so NAME ends at the first
// '-'; older tools wrote NAME unescaped, so a folder that begins with the
// name as METADATA writes it, then '-', counts too.
bool folder_names(std::string_view stem, std::string_view name) {
    if (normalize_package_name(stem.substr(0, stem.find('-'))) == normalize_package_name(name)) return true;
    return stem.size() > name.size() && stem[name.size()] == '-' &&
           normalize_package_name(stem.substr(0, name.size())) == normalize_package_name(name);
}

bool is_directory(const std::string& path) {
    struct stat info {};
    return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
}

std::vector<MetadataEntry> list_metadata_entries(DIR* dir) {
    std::vector<MetadataEntry> entries;
    while (const dirent* entry = ::readdir(dir)) {
        const std::string_view name = entry->d_name;
        if (name.ends_with(kDistInfo) || name.ends_with(kEggInfo))
            entries.push_back({std::string(name), entry->d_type});
    }
    // Directory order is arbitrary; sorting makes "first one wins" repeatable.
    std::sort(entries.begin(), entries.end(),
              [](const MetadataEntry& a, const MetadataEntry& b) { return a.file_name < b.file_name; });
    return entries;
}

// Reads one metadata entry into `index`, or records why it does not count.
void read_entry(const std::string& dir, const MetadataEntry& entry, PackageIndex& index) {
    const bool dist_info = std::string_view(entry.file_name).ends_with(kDistInfo);
    const std::string location = dir + "/" + entry.file_name;
    const bool type_unknown = entry.type == DT_UNKNOWN || entry.type == DT_LNK;  // stat() must tell
    const bool folder = entry.type == DT_DIR || (type_unknown && is_directory(location));
    // "NAME-VERSION[-pyX.Y]", the folder name without its suffix.
    const std::string_view stem = std::string_view(entry.file_name).substr(
        0, entry.file_name.size() - (dist_info ? kDistInfo.size() : kEggInfo.size()));
    const std::string_view folder_name = stem.substr(0, stem.find('-'));
    const std::string name = normalize_package_name(folder_name);

    const std::string metadata_file = dist_info ? "METADATA" : "PKG-INFO";
    std::string metadata_path = location + "/" + metadata_file;
    if (!folder) {
        if (dist_info) {
            index.skipped.push_back({name, location, "not a folder"});
            return;
        }
        metadata_path = location;  // an old single-file .egg-info holds PKG-INFO itself
    }
    std::string error;
    const auto block = read_metadata_header_block(metadata_path, error);
    if (!block) {
        index.skipped.push_back({name, location, fmt::format("{} is unreadable: {}", metadata_file, error)});
        return;
    }
    const MetadataHeaders headers = parse_metadata_headers(*block);
    if (!headers.name || headers.name->empty()) {
        index.skipped.push_back({name, location, fmt::format("{} has no Name header", metadata_file)});
        return;
    }
    if (!folder_names(stem, *headers.name)) {
        index.skipped.push_back(
            {name, location, fmt::format("{} names '{}', not '{}'", metadata_file, *headers.name, folder_name)});
        return;
    }
    if (!headers.version || headers.version->empty()) {
        index.skipped.push_back({name, location, fmt::format("{} has no Version header", metadata_file)});
        return;
    }
    index.add({*headers.name, *headers.version, location});
}

}  // namespace

void PackageIndex::add(InstalledPackage package) {
    first_by_name_.try_emplace(normalize_package_name(package.name), packages_.size());
    packages_.push_back(std::move(package));
}

const InstalledPackage* PackageIndex::find(std::string_view name) const {
    const auto it = first_by_name_.find(normalize_package_name(name));
    return it == first_by_name_.end() ? nullptr : &packages_[it->second];
}

void PackageIndex::mark_unusable(std::string_view name, std::string why) {
    unusable_.insert_or_assign(normalize_package_name(name), std::move(why));
}

void PackageIndex::mark_device_code_read(std::string_view name) {
    if (!device_code_read(name)) device_code_read_.push_back(normalize_package_name(name));
}

bool PackageIndex::device_code_read(std::string_view name) const {
    return std::find(device_code_read_.begin(), device_code_read_.end(), normalize_package_name(name)) !=
           device_code_read_.end();
}

const std::string* PackageIndex::unusable_reason(std::string_view name) const {
    const auto it = unusable_.find(normalize_package_name(name));
    return it == unusable_.end() ? nullptr : &it->second;
}

const SkippedPackage* PackageIndex::skipped_for(std::string_view name) const {
    const std::string wanted = normalize_package_name(name);
    for (const SkippedPackage& entry : skipped)
        if (entry.name == wanted) return &entry;
    return nullptr;
}

std::vector<const InstalledPackage*> PackageIndex::shadowed() const {
    std::vector<const InstalledPackage*> later;
    for (std::size_t i = 0; i < packages_.size(); ++i)
        if (first_by_name_.at(normalize_package_name(packages_[i].name)) != i) later.push_back(&packages_[i]);
    return later;
}

PackageIndex scan_site_packages(const std::vector<std::string>& dirs) {
    PackageIndex index;
    for (const std::string& dir : dirs) {
        index.searched_dirs.push_back(dir);
        DIR* handle = ::opendir(dir.c_str());
        if (!handle) {
            index.missing_dirs.push_back(dir);
            if (errno != ENOENT) index.unreadable_dirs.emplace_back(dir, std::strerror(errno));
            continue;
        }
        const std::vector<MetadataEntry> entries = list_metadata_entries(handle);
        ::closedir(handle);
        for (const MetadataEntry& entry : entries) read_entry(dir, entry, index);
    }
    return index;
}

std::vector<std::string> expand_site_package_globs(const std::vector<std::string>& patterns) {
    std::vector<std::string> dirs;
    std::unordered_set<std::string> seen;
    for (const std::string& pattern : patterns) {
        if (pattern.empty()) continue;
        glob_t matches{};
        if (::glob(pattern.c_str(), GLOB_TILDE, nullptr, &matches) == 0) {
            for (std::size_t i = 0; i < matches.gl_pathc; ++i) {
                std::string path = matches.gl_pathv[i];
                if (is_directory(path) && seen.insert(path).second) dirs.push_back(std::move(path));
            }
        }
        ::globfree(&matches);
    }
    return dirs;
}

}  // namespace provision
