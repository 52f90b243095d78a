#include "native/extension_files.h"

#include <set>

#include <fmt/format.h>

#include "native/cubin.h"
#include "native/torch_symbols.h"

namespace provision::native {

ExtensionFiles read_extension_files(const std::vector<std::string>& paths) {
    ExtensionFiles files;
    std::set<std::string> seen_symbols;
    auto note = [&](std::string text) {
        if (files.notes.size() < kMaxNotes) files.notes.push_back(std::move(text));
        ++files.notes_total;
    };
    for (const auto& path : paths) {
        auto elf = ElfFile::open(path);
        if (!elf) {
            if (elf.error().kind != ReadErrorKind::not_elf) note(elf.error().message);
            continue;
        }
        files.modules.push_back(path);
        if (is_cubin(*elf)) {  // one architecture's SASS, loaded as it is: no fatbinary, no symbols
            const CubinTarget cubin = cubin_target(*elf);
            if (!cubin.target) {
                note(fmt::format("{}: {}", path, cubin.problem));
                continue;
            }
            FatbinSummary code = single_target_summary(*cubin.target);
            merge_into(files.device_code, code);
            files.module_code.push_back({path, std::move(code)});
            continue;
        }
        if (auto code = read_fatbin(*elf)) {
            merge_into(files.device_code, *code);
            if (code->containers > 0) files.module_code.push_back({path, std::move(*code)});
        } else {
            note(code.error().message);
        }
        auto needed = elf->undefined_dynamic_symbols();
        if (!needed) {
            note(needed.error().message);
            continue;
        }
        for (const auto& symbol : *needed) {
            if (symbol.weak || !in_torch_namespace(symbol.name) || seen_symbols.contains(symbol.name)) continue;
            if (files.torch_symbols.size() == kMaxTorchSymbols) {
                files.torch_symbols_complete = false;
                break;
            }
            seen_symbols.insert(symbol.name);
            files.torch_symbols.push_back({symbol.name, path});
        }
    }
    return files;
}

}  // namespace provision::native
