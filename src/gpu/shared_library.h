// A library opened with dlopen, so the NVIDIA libraries are never linked:
// a machine without them is an ordinary CPU-only machine.
#pragma once

#include <string>

namespace provision {

class SharedLibrary {
public:
    // Throws nothing: a library that cannot be opened is !loaded(), with
    // dlerror()'s text in error().
    explicit SharedLibrary(const std::string& name);
    ~SharedLibrary();
    SharedLibrary(const SharedLibrary&) = delete;
    SharedLibrary& operator=(const SharedLibrary&) = delete;

    bool loaded() const { return handle_ != nullptr; }
    const std::string& error() const { return error_; }

    // nullptr when the library lacks the symbol (an older driver).
    template <typename Function>
    Function symbol(const char* name) const {
        return reinterpret_cast<Function>(raw_symbol(name));
    }

    // Leaves the library mapped for the rest of the process.  libcuda must
    // never be unloaded once initialised, and a library whose call timed out
    // may still be running on another thread.
    void keep_loaded() { keep_loaded_ = true; }

private:
    void* raw_symbol(const char* name) const;

    void* handle_ = nullptr;
    bool keep_loaded_ = false;
    std::string error_;
};

}  // namespace provision
