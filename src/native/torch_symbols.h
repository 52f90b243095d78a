// Which of an extension's needed symbols belong to torch (the c10, at and
// torch namespaces), and whether the installed torch exports them.  An
// extension built against another torch release needs symbols this one no
// longer has ("undefined symbol: _ZN3c104cuda9SetDeviceEi" at import).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "native/elf_file.h"

namespace provision::native {

// Whether a mangled name lies in torch's namespaces: a nested name
// (_ZN..., _ZNK..., and the vtable, typeinfo and guard-variable forms
// _ZTVN..., _ZTIN..., _ZTSN..., _ZGVN...) whose outermost namespace is
// c10, at or torch.
bool in_torch_namespace(std::string_view mangled);

// The shared libraries of torch/lib, opened as they are first needed.
class TorchExports {
public:
    explicit TorchExports(std::string lib_folder);

    // Whether any library of the folder exports `symbol` (looked up through
    // GNU hash tables); nullopt when no library could answer (none readable,
    // or none with a GNU hash table): unknown, not missing.
    std::optional<bool> exports(std::string_view symbol);

    const std::string& folder() const { return folder_; }
    // Libraries that could not be read, and why.
    const std::vector<std::string>& notes() const { return notes_; }

private:
    void open_libraries();

    std::string folder_;
    bool opened_ = false;
    std::vector<ElfFile> libraries_;
    std::vector<std::string> notes_;
};

}  // namespace provision::native
