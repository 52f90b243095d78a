// The env file: sourceable by sh and bash, written atomically.
#pragma once

#include <string>

#include "workload_env/env_settings.h"

namespace provision {

// 'value' with every ' written as '\'' — safe for any byte but NUL.
std::string shell_quote(const std::string& value);

// A comment header, then one `export NAME='value'` per line.
std::string render_env_file(const EnvSettings& settings, const std::string& header_comment);

// The env file path that means "write no file": the settings are discarded.
constexpr const char* kDiscardedEnvFile = "/dev/null";

// Writes to an exclusively created temporary file in the same folder,
// flushes it to disk, then renames it over `path`: a reader sees the old file
// or the new one, never a mix.  On any failure the old file is left as it
// was, the temporary file is removed, and Error(io_failure) says why.
// Only a regular file is ever replaced: anything else at `path` (a device
// node, a FIFO, a folder, a symbolic link) is Error(io_failure) naming it.
// With `create_folders`, the folders above it that are missing are made
// first (never for a path that cannot name a file, such as one ending in
// '/').  (src/core/atomic_file.h, mode 0644.)
void write_env_file_atomically(const std::string& path, const std::string& contents, bool create_folders = false);

}  // namespace provision
