// The folders the dynamic loader searches for a library, as far as they can
// be read from files, in glibc's order (elf/dl-load.c, _dl_map_object):
//
//   1. DT_RPATH of the object that needs the library, unless that object
//      has a DT_RUNPATH (then its DT_RPATH is ignored);
//   2. LD_LIBRARY_PATH's entries (split at ':' and ';', as _dl_init_paths
//      splits them);
//   3. DT_RUNPATH of the object that needs the library;
//   4. the folders of the *.conf files of /etc/ld.so.conf.d (each at most
//      1 MiB; ld.so reads them whole), standing in for ld.so.cache;
//   5. the system's default folders.
//
// An empty entry of LD_LIBRARY_PATH or of a DT_RPATH / DT_RUNPATH is the
// current folder, as fillin_rpath reads it ("." here: the folder the
// workload runs in).  $ORIGIN and ${ORIGIN} are the needing object's
// folder; an entry with $LIB or $PLATFORM (expanded by ld.so for the
// machine), or with $ORIGIN in LD_LIBRARY_PATH (the program's folder), is
// left out.  The objects that loaded the needing one
// (and the executable's DT_RPATH) are not read.  Each folder once, in order.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace provision::native {

struct LoaderFolder {
    std::string folder;
    std::string named_by;  // "DT_RPATH of X", "LD_LIBRARY_PATH", "DT_RUNPATH of X", the .conf file, or "default"
};

struct UnreadConfig {
    std::string path;
    std::string why;
};

struct LoaderFolders {
    std::vector<LoaderFolder> folders;
    std::vector<UnreadConfig> unread;  // configuration files that could not be read
};

// The object whose DT_NEEDED names the library (libtorch_cuda.so for NCCL).
struct NeedingObject {
    std::string path;                    // names it in LoaderFolder::named_by
    std::string origin;                  // its folder: what $ORIGIN stands for
    std::optional<std::string> rpath;    // DT_RPATH, as written
    std::optional<std::string> runpath;  // DT_RUNPATH, as written
};

struct LoaderSearch {
    std::string ld_library_path;
    std::string ld_so_conf_dir = "/etc/ld.so.conf.d";
    std::vector<std::string> default_folders;
    std::optional<NeedingObject> needed_by;
};

LoaderFolders loader_folders(const LoaderSearch& search);
LoaderFolders loader_folders(const std::string& ld_library_path, const std::string& ld_so_conf_dir,
                             const std::vector<std::string>& default_folders = {});

// The default folders of glibc's loader on x86-64 Debian, Ubuntu and RHEL.
const std::vector<std::string>& default_loader_folders();

// `text` cut at every `separator` (empty parts kept).
std::vector<std::string> split(const std::string& text, char separator);

// The names in `folder` that start with `prefix`, sorted.
std::vector<std::string> sorted_entries(const std::string& folder, std::string_view prefix = "");

}  // namespace provision::native
