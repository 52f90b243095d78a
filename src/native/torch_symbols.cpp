#include "native/torch_symbols.h"

#include <dirent.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

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

void TorchExports::list_libraries() {
    listed_ = true;
    DIR* dir = ::opendir(folder_.c_str());
    if (!dir) {
        folder_unreadable_ = true;
        notes_.push_back(fmt::format("{} cannot be read: {}", folder_, std::strerror(errno)));
        return;
    }
    while (const dirent* entry = ::readdir(dir)) {
        const std::string_view name = entry->d_name;
        if (name.substr(0, 3) == "lib" && name.find(".so") != std::string_view::npos) libraries_.emplace_back(name);
    }
    ::closedir(dir);
    // libc10 and libtorch_cpu export most of what extensions need: a fixed
    // order keeps lookups (and the notes) the same on every run.
    std::sort(libraries_.begin(), libraries_.end());
}

std::vector<ExportAnswer> TorchExports::look_up(const std::vector<std::string>& symbols) {
    if (!listed_) list_libraries();
    std::vector<std::string> pending;
    std::set<std::string> queued, found;
    for (const auto& symbol : symbols)
        if (!answers_.contains(symbol) && queued.insert(symbol).second) pending.push_back(symbol);
    for (const auto& name : libraries_) {
        if (pending.size() == found.size()) break;
        if (cannot_answer_.contains(name)) continue;
        auto file = ElfFile::open(folder_ + "/" + name);  // closed at the end of this iteration
        if (!file) {
            cannot_answer_.insert(name);
            notes_.push_back(file.error().message);
            continue;
        }
        for (const auto& symbol : pending) {
            if (found.contains(symbol)) continue;
            const auto answer = file->exports_symbol(symbol);
            if (!answer) {
                cannot_answer_.insert(name);
                notes_.push_back(answer.error().message);
                break;
            }
            if (*answer) found.insert(symbol);
        }
    }
    // "Missing" needs every library's answer, and at least one library.
    const bool all_answered = !folder_unreadable_ && !libraries_.empty() && cannot_answer_.empty();
    for (const auto& symbol : pending)
        answers_[symbol] = found.contains(symbol) ? ExportAnswer::exported
                           : all_answered         ? ExportAnswer::missing
                                                  : ExportAnswer::unknown;
    std::vector<ExportAnswer> out;
    out.reserve(symbols.size());
    for (const auto& symbol : symbols) out.push_back(answers_.at(symbol));
    return out;
}

std::optional<bool> TorchExports::exports(std::string_view symbol) {
    const ExportAnswer answer = look_up({std::string(symbol)}).front();
    if (answer == ExportAnswer::unknown) return std::nullopt;
    return answer == ExportAnswer::exported;
}

}  // namespace provision::native
