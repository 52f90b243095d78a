// The folders the dynamic loader searches for a library, as far as they can
// be read from files: LD_LIBRARY_PATH's entries, then those of the *.conf
// files of /etc/ld.so.conf.d (each at most 1 MiB; ld.so reads them whole),
// then the system's default folders.  Each folder once, in order.
#pragma once

#include <string>
#include <vector>

namespace provision::native {

struct LoaderFolder {
    std::string folder;
    std::string named_by;  // "LD_LIBRARY_PATH", the .conf file, or "default"
};

struct UnreadConfig {
    std::string path;
    std::string why;
};

struct LoaderFolders {
    std::vector<LoaderFolder> folders;
    std::vector<UnreadConfig> unread;  // configuration files that could not be read
};

LoaderFolders loader_folders(const std::string& ld_library_path, const std::string& ld_so_conf_dir,
                             const std::vector<std::string>& default_folders = {});

// The default folders of glibc's loader on x86-64 Debian, Ubuntu and RHEL.
const std::vector<std::string>& default_loader_folders();

// `text` cut at every `separator` (empty parts kept).
std::vector<std::string> split(const std::string& text, char separator);

// The names in `folder` that start with `prefix`, sorted.
std::vector<std::string> sorted_entries(const std::string& folder, std::string_view prefix = "");

}  // namespace provision::native
