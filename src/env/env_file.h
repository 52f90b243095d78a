// The env file: sourceable by sh and bash, written atomically.
#pragma once

#include <string>

#include "env/env_settings.h"

namespace provision {

// 'value' with every ' written as '\'' — safe for any byte but NUL.
std::string shell_quote(const std::string& value);

// A comment header, then one `export NAME='value'` per line.
std::string render_env_file(const EnvSettings& settings, const std::string& header_comment);

// Writes to an exclusively created temporary file in the same folder,
// flushes it to disk, then renames it over `path`: a reader sees the old file
// or the new one, never a mix.  On any failure the old file is left as it
// was, the temporary file is removed, and Error(io_failure) says why.
void write_env_file_atomically(const std::string& path, const std::string& contents);

}  // namespace provision
