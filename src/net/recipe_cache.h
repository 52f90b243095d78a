// The on-disk cache of fetched recipes, so a start without network still
// finds the recipe it used last time, and an unchanged recipe is revalidated
// with its ETag instead of downloaded again.
//
// Layout, per URL (named by a 64-bit FNV-1a hash of the full URL):
//   <cache_dir>/recipes/<hash>.toml   the body, exactly as served
//   <cache_dir>/recipes/<hash>.meta   TOML: url (redacted), etag, body size
//                                     and checksum, fetch time
// Each file is written to a temporary file in the same folder, flushed and
// renamed, so a reader never sees half a file.  The body is written first
// and the metadata names the body's checksum: if two runs race, or one dies
// between the renames, a metadata file that does not match the body is
// ignored (the body is still a whole, earlier answer for that URL; it just is
// not revalidated).  Files are created 0600: a recipe may be private.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace provision {

// Where fetched recipes are cached, from the environment alone:
//   $PROVISION_CACHE_DIR, else $XDG_CACHE_HOME/provision (when absolute),
//   else $HOME/.cache/provision (when HOME is set and not "/"),
//   else /var/cache/provision (root in a container without HOME).
std::string default_cache_dir(const std::map<std::string, std::string>& environment);

struct CachedRecipe {
    std::string path;        // the body, a TOML file for the loader
    std::string etag;        // "" when none was stored or the metadata does not match the body
    std::string fetched_at;  // when it was stored, "YYYY-MM-DD HH:MM UTC"
};

class RecipeCache {
public:
    // An empty folder disables caching: nothing is read, store() throws.
    explicit RecipeCache(std::string cache_dir);

    bool enabled() const { return !folder_.empty(); }
    const std::string& folder() const { return folder_; }

    std::optional<CachedRecipe> find(const std::string& url) const;

    // Stores body and ETag for url; returns the body's path.  Throws
    // Error(io_failure) naming the file when the cache cannot be written.
    std::string store(const std::string& url, const std::string& body, const std::string& etag) const;

    // Writes a body that is not to be kept (not TOML, or no usable cache)
    // where the loader can read it: beside the cache entry when the cache is
    // writable, else in the temporary folder.  Throws Error(io_failure).
    std::string store_unverified(const std::string& url, const std::string& body) const;

private:
    std::string entry_base(const std::string& url) const;  // <folder>/<hash>
    std::string folder_;                                   // <cache_dir>/recipes, "" when disabled
};

}  // namespace provision
