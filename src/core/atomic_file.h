// Writing a file whole or not at all: the contents go to a temporary file
// created exclusively beside the target, are flushed to disk, and only then
// take the target's name.  A reader sees the old file or the new one, never
// a mix, and a failed or interrupted write leaves no temporary file.
//
// Every write:
//   - creates its temporary file with mkostemps (O_CREAT|O_EXCL: never
//     through a planted symbolic link) and O_CLOEXEC (a child started
//     meanwhile does not inherit the descriptor);
//   - registers it with src/core/termination, so a signal that stops the
//     run mid-write removes it (only while it is still the file created);
//   - sets the file mode with fchmod (the umask does not apply);
//   - fsyncs the file before it takes the target's name, and the folder
//     after, so the name itself survives a crash.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <sys/types.h>

#include "core/file_identity.h"

namespace provision {

struct AtomicWriteOptions {
    // The file's permissions: 0644 for what others read (the env file, the
    // recipes written out); 0600 for what may be private (a cached recipe).
    mode_t mode = 0644;
    // true: rename(2) over the target, replacing the file there.  false:
    // link(2) into place, which fails (EEXIST) rather than replace a file,
    // even one that appeared since the caller looked.
    bool replace = true;
    // Refuse, leaving it as it is, anything at the target that is not a
    // regular file (a device node, a FIFO, a folder, a symbolic link):
    // rename(2) would replace it.  Off where the folder is the writer's own.
    bool only_replace_regular_file = true;
    // Create the folders above the file that are missing (a hostPath the
    // node has not made yet).  A path that cannot name a file (it ends in
    // '/', or in "." or "..") is refused first: no folder is created for it.
    bool create_folders = false;
    // The file is provision's while it runs (the published labels and
    // metrics): once renamed into place it is registered with
    // src/core/termination, the rename and the registration one step for
    // the signal handler, so a signal that stops the run removes it (while
    // it is still this file).
    bool remove_at_termination = false;
};

// Why a write did not happen.  Nothing was changed at the target, and no
// temporary file is left.
struct WriteFailure {
    std::string step;  // "write failed", "rename failed", "cannot create a temporary file in DIR", ...
    int error = 0;     // its errno; 0 when the write was refused, or the path cannot name a file
    std::string found; // refused: what is at the target instead ("a FIFO", "a symbolic link to /x")

    bool refused() const { return !found.empty(); }
    // "STEP: strerror(error)", or STEP alone without an errno; for a
    // refusal, "it is FOUND, not a regular file".
    std::string message() const;
};

// Writes `contents` to `path` as described above.  nullopt when written.
[[nodiscard]] std::optional<WriteFailure> write_file_atomically(const std::string& path, std::string_view contents,
                                                                const AtomicWriteOptions& options = {});

// The first step alone: a new file named from `path_template` (whose
// "XXXXXX" followed by `suffix_length` characters mkostemps replaces; the
// name chosen is written back), holding `contents` with `mode`, flushed and
// closed.  It stays registered with src/core/termination: the caller removes
// it, and calls keep_at_termination(), when done with it.  `created` (when
// given) receives the file's identity.  On failure nothing is left.
[[nodiscard]] std::optional<WriteFailure> write_temporary_file(std::string& path_template, int suffix_length,
                                                               std::string_view contents, mode_t mode,
                                                               FileId* created = nullptr);

}  // namespace provision
