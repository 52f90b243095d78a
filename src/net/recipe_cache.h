// The on-disk cache of fetched recipes, so a start without network still
// finds the recipe it used last time, and an unchanged recipe is revalidated
// with its ETag instead of downloaded again.
//
// Layout, per URL (named by a 64-bit FNV-1a hash of the full URL):
//   <cache_dir>/recipes/<hash>.toml   the body, exactly as served
//   <cache_dir>/recipes/<hash>.meta   TOML: url (redacted), etag, body size
//                                     and checksum, fetch time
// Each file is written to a temporary file in the same folder, flushed and
// renamed, so a reader never sees half a file (src/core/atomic_file.h).
// Files are created 0600: a recipe may be private.
//
// A cached body is used only when it is verified: a regular file and a
// folder owned by this user and writable by no one else, and a body whose
// size and checksum are those its metadata recorded.  Otherwise the copy is
// refused (a run that would need it stops with exit 3) instead of trusted:
// an edited or swapped cache entry must not decide what runs.  The checksum
// (FNV-1a) finds edits and truncation, not a forger: whoever can rewrite the
// body can rewrite the metadata too, which the owner and mode checks rule
// out for anyone but this user.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace provision {

// Where fetched recipes are cached when PROVISION_CACHE_DIR does not say:
//   $XDG_CACHE_HOME/provision (when absolute),
//   else $HOME/.cache/provision (when HOME is set and not "/"),
//   else /var/cache/provision (root in a container without HOME).
std::string default_cache_dir(const std::string& xdg_cache_home, const std::string& home);

struct CachedRecipe {
    std::string path;        // the body, a TOML file for the loader
    std::string etag;        // "" when none was stored or the metadata does not match the body
    std::string fetched_at;  // when it was stored, "YYYY-MM-DD HH:MM UTC"
    std::string refused;     // why the copy must not be used; "" when it is verified
};

class RecipeCache {
public:
    // An empty folder disables caching: nothing is read, store() throws.
    explicit RecipeCache(std::string cache_dir);

    bool enabled() const { return !folder_.empty(); }
    const std::string& folder() const { return folder_; }

    // nullopt when no body is cached for url; else the copy, verified or
    // with `refused` saying why it must not be used.
    std::optional<CachedRecipe> find(const std::string& url) const;

    // Stores body and ETag for url; returns the body's path.  Throws
    // Error(io_failure) naming the file when the cache cannot be written.
    std::string store(const std::string& url, const std::string& body, const std::string& etag) const;

    // Writes a body that is not to be kept (not TOML, or no usable cache)
    // where the loader can read it: beside the cache entry when the cache is
    // writable, else in the temporary folder (`temporary` set: the caller
    // removes that file once the recipes are loaded).  Throws Error(io_failure).
    std::string store_unverified(const std::string& url, const std::string& body, bool& temporary) const;

private:
    std::string entry_base(const std::string& url) const;  // <folder>/<hash>
    std::string folder_;                                   // <cache_dir>/recipes, "" when disabled
};

}  // namespace provision
