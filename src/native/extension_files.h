// The compiled modules of an installed package (the .so and .cubin files its
// RECORD lists), read without loading them: the device code each carries
// (SageAttention ships one module per architecture, flashinfer-cubin one
// cubin per kernel and architecture), and the torch symbols the .so files
// need from the dynamic loader.
#pragma once

#include <string>
#include <vector>

#include "native/fatbin.h"

namespace provision::native {

struct NeededSymbol {
    std::string name;    // mangled
    std::string module;  // the module that needs it
};

struct ModuleCode {
    std::string module;
    FatbinSummary code;  // has containers
};

struct ExtensionFiles {
    std::vector<std::string> modules;  // the ELF files read
    std::vector<ModuleCode> module_code;  // each module that carries device code, in `modules` order
    FatbinSummary device_code;         // every module's fatbinary together; no containers when none has one
    std::vector<NeededSymbol> torch_symbols;  // undefined, not weak, in c10/at/torch; each name once
    bool torch_symbols_complete = true;       // false: more than kMaxTorchSymbols, the rest not listed
    std::vector<std::string> notes;    // modules that could not be read, and why: the first kMaxNotes
    std::size_t notes_total = 0;       // how many there were in all
};

// The most torch symbols listed for one package, and notes kept.
constexpr std::size_t kMaxTorchSymbols = 1 << 16;
constexpr std::size_t kMaxNotes = 20;

// Reads `paths` (absolute) one at a time; a path that is not an ELF file is skipped
// without a note (RECORD's .so entries are ELF files, but a test tree may
// hold anything), one that cannot be read gets a note.
ExtensionFiles read_extension_files(const std::vector<std::string>& paths);

}  // namespace provision::native
