// libcurl, opened with dlopen on first use.  Most starts never touch the
// network; linking libcurl would make every one of them load it and the
// thirty libraries it pulls in (TLS, Kerberos, LDAP, ...), about half of
// provision's start-up on a machine without a GPU.  curl/curl.h still
// supplies the types and constants.
#pragma once

#include <string>

#include <curl/curl.h>

namespace provision {

// The libcurl functions provision calls (libcurl >= 7.84 has them all).
struct CurlLibrary {
    CURLcode (*global_init)(long flags) = nullptr;
    CURL* (*easy_init)() = nullptr;
    CURLcode (*easy_setopt)(CURL* handle, CURLoption option, ...) = nullptr;
    CURLcode (*easy_perform)(CURL* handle) = nullptr;
    CURLcode (*easy_getinfo)(CURL* handle, CURLINFO info, ...) = nullptr;
    void (*easy_cleanup)(CURL* handle) = nullptr;
    const char* (*easy_strerror)(CURLcode code) = nullptr;
    CURLHcode (*easy_header)(CURL* handle, const char* name, size_t index, unsigned int origin, int request,
                             curl_header** header) = nullptr;
    char* (*easy_unescape)(CURL* handle, const char* text, int length, int* out_length) = nullptr;
    void (*free)(void* pointer) = nullptr;
    curl_slist* (*slist_append)(curl_slist* list, const char* text) = nullptr;
    void (*slist_free_all)(curl_slist* list) = nullptr;
    CURLU* (*url)() = nullptr;
    void (*url_cleanup)(CURLU* handle) = nullptr;
    CURLUcode (*url_set)(CURLU* handle, CURLUPart part, const char* content, unsigned int flags) = nullptr;
    CURLUcode (*url_get)(const CURLU* handle, CURLUPart part, char** content, unsigned int flags) = nullptr;
};

// Opens libcurl (PROVISION_CURL_LIBRARY, default libcurl.so.4) and runs
// curl_global_init, once per process, thread-safe.  nullptr when it cannot
// be loaded or lacks a function; why_not() then says why in a user's words.
// Which file to load (PROVISION_CURL_LIBRARY); set before the first use.
void use_curl_library(const std::string& name);

const CurlLibrary* curl_library();
std::string curl_library_why_not();

}  // namespace provision
