#include "native/torch_symbols.h"

#include <dirent.h>

#include <algorithm>

#include <fmt/format.h>

namespace provision::native {

bool in_torch_namespace(std::string_view name) {
    if (name.substr(0, 2) != "_Z") return false;
    name.remove_prefix(2);
    // Special names: virtual table, typeinfo, typeinfo name, guard variable.
    for (std::string_view special : {"TV", "TI", "TS", "GV"})
        if (name.substr(0, 2) == special) {
            name.remove_prefix(2);
            break;
        }
    if (name.empty() || name.front() != 'N') return false;
    name.remove_prefix(1);
    while (!name.empty() && (name.front() == 'K' || name.front() == 'V' || name.front() == 'r')) name.remove_prefix(1);
    for (std::string_view space : {"3c10", "2at", "5torch"})
        if (name.substr(0, space.size()) == space) return true;
    return false;
}

TorchExports::TorchExports(std::string lib_folder) : folder_(std::move(lib_folder)) {}

void TorchExports::open_libraries() {
    opened_ = true;
    DIR* dir = ::opendir(folder_.c_str());
    if (!dir) {
        notes_.push_back(fmt::format("{} cannot be read", folder_));
        return;
    }
    std::vector<std::string> names;
    while (const dirent* entry = ::readdir(dir)) {
        const std::string_view name = entry->d_name;
        if (name.substr(0, 3) == "lib" && name.find(".so") != std::string_view::npos) names.emplace_back(name);
    }
    ::closedir(dir);
    // libc10 and libtorch_cpu export most of what extensions need: a fixed
    // order keeps lookups (and the notes) the same on every run.
    std::sort(names.begin(), names.end());
    for (const auto& name : names) {
        auto file = ElfFile::open(folder_ + "/" + name);
        if (file)
            libraries_.push_back(std::move(*file));
        else
            notes_.push_back(file.error().message);
    }
}

std::optional<bool> TorchExports::exports(std::string_view symbol) {
    if (!opened_) open_libraries();
    bool answered = false;
    for (const auto& library : libraries_) {
        const auto found = library.exports_symbol(symbol);
        if (!found) continue;  // no GNU hash table, or malformed: this library cannot answer
        answered = true;
        if (*found) return true;
    }
    if (!answered) return std::nullopt;
    return false;
}

}  // namespace provision::native
