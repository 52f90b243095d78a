#include "net/recipe_cache.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/regular_file.h"
#include "core/text.h"
#include "net/redaction.h"

namespace provision {
namespace fs = std::filesystem;
namespace {

// Stable across builds and platforms (std::hash is neither), which a file
// name kept on disk needs.
std::uint64_t fnv1a64(const std::string& text) {
    std::uint64_t hash = 0xcbf29ce484222325ULL;
    for (const unsigned char c : text) {
        hash ^= c;
        hash *= 0x100000001b3ULL;
    }
    return hash;
}

std::string hex(std::uint64_t value) { return fmt::format("{:016x}", value); }

[[noreturn]] void fail(const std::string& path, const std::string& what, int error) {
    throw Error(ExitCode::io_failure,
                fmt::format("cannot write {}: {}: {}", echoed_path(path), what, std::strerror(error)));
}

// The entries' folder is this user's alone (0700): find() trusts nothing
// in a folder that others may write.
void create_folder(const fs::path& folder) {
    std::error_code error;
    const bool created = fs::create_directories(folder, error);
    if (error) fail(folder.string(), "cannot create the folder", error.value());
    if (created) ::chmod(folder.c_str(), 0700);
}

// Entries are 0600 (a recipe may be private).  The folder is this user's
// own: whatever is at an entry's name is replaced.
void write_atomically(const std::string& path, const std::string& contents) {
    create_folder(fs::path(path).parent_path());
    const auto failure =
        write_file_atomically(path, contents, {.mode = 0600, .replace = true, .only_replace_regular_file = false});
    if (failure)
        throw Error(ExitCode::io_failure,
                    fmt::format("cannot write {}: {}", echoed_path(path), failure->message()));
}

std::string modification_time(const std::string& path) {
    struct stat info{};
    if (::stat(path.c_str(), &info) != 0) return "an unknown time";
    std::tm utc{};
    gmtime_r(&info.st_mtime, &utc);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%d %H:%M UTC", &utc);
    return text;
}

// Why `path` cannot be trusted: owned by another user, or writable by its
// group or by everyone.  "" when it is this user's alone.
std::string unsafe_ownership(const std::string& path) {
    struct stat info {};
    if (::lstat(path.c_str(), &info) != 0) return fmt::format("{}: {}", path, std::strerror(errno));
    if (info.st_uid != ::geteuid())
        return fmt::format("{} is owned by uid {}, not by this user (uid {})", path, info.st_uid, ::geteuid());
    if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0)
        return fmt::format("{} is writable by its group or by everyone (mode {:04o})", path, info.st_mode & 07777);
    return "";
}

// An ETag goes back into a request header: refuse anything that could
// smuggle a second header or is absurdly long.
bool plausible_etag(const std::string& etag) {
    return !etag.empty() && etag.size() <= 1024 && etag.find_first_of("\r\n") == std::string::npos;
}

}  // namespace

std::string default_cache_dir(const std::string& xdg_cache_home, const std::string& home) {
    // The XDG base directory spec says relative values are to be ignored.
    if (!xdg_cache_home.empty() && xdg_cache_home.front() == '/') return (fs::path(xdg_cache_home) / "provision").string();
    if (!home.empty() && home != "/")
        return (fs::path(home) / ".cache" / "provision").string();
    return "/var/cache/provision";
}

RecipeCache::RecipeCache(std::string cache_dir)
    : folder_(cache_dir.empty() ? std::string() : (fs::path(cache_dir) / "recipes").string()) {}

std::string RecipeCache::entry_base(const std::string& url) const {
    return (fs::path(folder_) / hex(fnv1a64(url))).string();
}

std::optional<CachedRecipe> RecipeCache::find(const std::string& url) const {
    if (!enabled()) return std::nullopt;
    const std::string base = entry_base(url);
    CachedRecipe cached{base + ".toml", "", "", ""};
    struct stat info {};
    if (::lstat(cached.path.c_str(), &info) != 0) return std::nullopt;
    cached.fetched_at = modification_time(cached.path);
    std::string why;
    const auto body = read_regular_file(cached.path, kMaxRecipeBytes, why);
    if (!body) {
        cached.refused = why;
        return cached;
    }
    for (const std::string& path : {folder_, cached.path, base + ".meta"}) {
        cached.refused = unsafe_ownership(path);
        if (!cached.refused.empty()) return cached;
    }
    try {
        const toml::table meta = toml::parse(read_regular_file_or_throw(base + ".meta", kMaxRecipeBytes),
                                             base + ".meta");
        const auto etag = meta["etag"].value<std::string>();
        const auto bytes = meta["body_bytes"].value<std::int64_t>();
        const auto checksum = meta["body_fnv1a64"].value<std::string>();
        if (!bytes || !checksum)
            cached.refused = "its metadata records no size and checksum";
        else if (static_cast<std::size_t>(*bytes) != body->size() || *checksum != hex(fnv1a64(*body)))
            cached.refused = fmt::format("it does not match its metadata ({} bytes, checksum {} recorded; {} bytes, "
                                         "checksum {} found): it was changed after it was fetched",
                                         *bytes, echoed(*checksum), body->size(),
                                         hex(fnv1a64(*body)));
        else if (etag && plausible_etag(*etag))
            cached.etag = *etag;
    } catch (const toml::parse_error&) {
        cached.refused = "its metadata is malformed";
    } catch (const Error& error) {
        cached.refused = fmt::format("its metadata {}", error.what());
    }
    return cached;
}

std::string RecipeCache::store(const std::string& url, const std::string& body, const std::string& etag) const {
    if (!enabled()) throw Error(ExitCode::io_failure, "the recipe cache is disabled");
    const std::string base = entry_base(url);
    write_atomically(base + ".toml", body);
    toml::table meta{
        {"url", redact_url(url)},
        {"etag", plausible_etag(etag) ? etag : std::string()},
        {"body_bytes", static_cast<std::int64_t>(body.size())},
        {"body_fnv1a64", hex(fnv1a64(body))},
    };
    std::ostringstream text;
    text << "# provision recipe cache entry: describes " << fs::path(base + ".toml").filename().string() << "\n"
         << meta << "\n";
    write_atomically(base + ".meta", text.str());
    return base + ".toml";
}

std::string RecipeCache::store_unverified(const std::string& url, const std::string& body, bool& temporary) const {
    temporary = false;
    if (enabled()) {
        try {
            const std::string path = entry_base(url) + ".unverified.toml";
            write_atomically(path, body);
            return path;
        } catch (const Error&) {
            // Fall through to the temporary folder.
        }
    }
    std::string path = (fs::temp_directory_path() / "provision-recipe-XXXXXX.toml").string();
    // Lives until the recipes are loaded (the caller removes it then), or
    // until a signal stops the run.
    if (const auto failure = write_temporary_file(path, 5, body, 0600))
        throw Error(ExitCode::io_failure,
                    fmt::format("cannot write {}: {}", echoed_path(path), failure->message()));
    temporary = true;
    return path;
}

}  // namespace provision
