// Which of an extension's needed symbols belong to torch (the c10, at and
// torch namespaces), and whether the installed torch exports them.  An
// extension built against another torch release needs symbols this one no
// longer has ("undefined symbol: _ZN3c104cuda9SetDeviceEi" at import).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "native/elf_file.h"

namespace provision::native {

// Whether a mangled name lies in torch's namespaces: a nested name
// (_ZN..., _ZNK..., and the vtable, typeinfo and guard-variable forms
// _ZTVN..., _ZTIN..., _ZTSN..., _ZGVN...) whose outermost namespace is
// c10, at or torch.
bool in_torch_namespace(std::string_view mangled);

enum class ExportAnswer {
    exported,  // a library of the folder exports it
    missing,   // every library answered, and none exports it
    unknown,   // none of those that answered exports it, but some could not answer
};

// The shared libraries of torch/lib, asked for symbols.
class TorchExports {
public:
    explicit TorchExports(std::string lib_folder);

    // The answer for each of `symbols`, in order.  Each library is opened
    // once per call and closed before the next (one open file at a time,
    // whatever RLIMIT_NOFILE allows), and only for the symbols still
    // unanswered; answers are kept for later calls.  A library that cannot
    // answer (unreadable, no GNU or SysV hash table, malformed, past the
    // lookup budget) is named in notes() and never asked again, and a symbol
    // the others do not export is then unknown, never missing.
    std::vector<ExportAnswer> look_up(const std::vector<std::string>& symbols);

    // One symbol: true, false, or nullopt when unknown.
    std::optional<bool> exports(std::string_view symbol);

    const std::string& folder() const { return folder_; }
    // Libraries that could not answer, and why; each once.
    const std::vector<std::string>& notes() const { return notes_; }

private:
    void list_libraries();

    std::string folder_;
    bool listed_ = false;
    bool folder_unreadable_ = false;
    std::vector<std::string> libraries_;         // file names, sorted
    std::set<std::string> cannot_answer_;        // file names
    std::unordered_map<std::string, ExportAnswer> answers_;
    std::vector<std::string> notes_;
};

}  // namespace provision::native
