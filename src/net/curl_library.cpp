#include "net/curl_library.h"

#include <cstdlib>
#include <memory>
#include <mutex>

#include <fmt/format.h>

#include "core/shared_library.h"

namespace provision {
namespace {

struct Loaded {
    std::unique_ptr<SharedLibrary> library;
    CurlLibrary functions;
    bool usable = false;
    std::string why_not;
};

std::string& chosen_name() {
    static std::string name = "libcurl.so.4";
    return name;
}

Loaded load() {
    Loaded loaded;
    loaded.library = std::make_unique<SharedLibrary>(chosen_name());
    if (!loaded.library->loaded()) {
        loaded.why_not = fmt::format("libcurl is not installed ({}); install libcurl4 to use URLs",
                                     loaded.library->error());
        return loaded;
    }
    loaded.library->keep_loaded();  // handles and global state live until exit or exec
    CurlLibrary& f = loaded.functions;
    const std::string missing = loaded.library->resolve({
        Symbol::required(f.global_init, "curl_global_init"),
        Symbol::required(f.easy_init, "curl_easy_init"),
        Symbol::required(f.easy_setopt, "curl_easy_setopt"),
        Symbol::required(f.easy_perform, "curl_easy_perform"),
        Symbol::required(f.easy_getinfo, "curl_easy_getinfo"),
        Symbol::required(f.easy_cleanup, "curl_easy_cleanup"),
        Symbol::required(f.easy_strerror, "curl_easy_strerror"),
        Symbol::required(f.easy_header, "curl_easy_header"),
        Symbol::required(f.easy_unescape, "curl_easy_unescape"),
        Symbol::required(f.free, "curl_free"),
        Symbol::required(f.slist_append, "curl_slist_append"),
        Symbol::required(f.slist_free_all, "curl_slist_free_all"),
        Symbol::required(f.url, "curl_url"),
        Symbol::required(f.url_cleanup, "curl_url_cleanup"),
        Symbol::required(f.url_set, "curl_url_set"),
        Symbol::required(f.url_get, "curl_url_get"),
    });
    if (!missing.empty()) {
        loaded.why_not = fmt::format("{} lacks {} (libcurl 7.84 or newer is needed)", chosen_name(), missing);
        return loaded;
    }
    // Not thread-safe, and must run before any handle exists: done here,
    // under the once-only initialisation.  Never undone (the process exits or execs).
    if (f.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        loaded.why_not = "libcurl failed to initialise";
        return loaded;
    }
    loaded.usable = true;
    return loaded;
}

const Loaded& loaded_library() {
    static const Loaded loaded = load();  // thread-safe one-time initialisation
    return loaded;
}

}  // namespace

void use_curl_library(const std::string& name) { chosen_name() = name; }

const CurlLibrary* curl_library() {
    const Loaded& loaded = loaded_library();
    return loaded.usable ? &loaded.functions : nullptr;
}

std::string curl_library_why_not() { return loaded_library().why_not; }

}  // namespace provision
