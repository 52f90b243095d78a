// A library opened with dlopen, so the NVIDIA libraries and libcurl are
// never linked: a machine without them is an ordinary CPU-only machine, and
// a start that uses no URL never loads libcurl.
#pragma once

#include <initializer_list>
#include <string>
#include <type_traits>
#include <vector>

namespace provision {

// One entry of a function table that SharedLibrary::resolve() fills: the
// slot (a function pointer) and the names to try, the newest first.
class Symbol {
public:
    // A function the table cannot do without.  A library that has none of
    // `names` lacks the last of them, the one every version has.
    template <typename Function>
    static Symbol required(Function& slot, std::initializer_list<const char*> names) {
        return Symbol(slot, names, true);
    }
    template <typename Function>
    static Symbol required(Function& slot, const char* name) {
        return Symbol(slot, {name}, true);
    }
    // A function the caller checks for nullptr before calling (an older
    // library may lack it).
    template <typename Function>
    static Symbol optional(Function& slot, std::initializer_list<const char*> names) {
        return Symbol(slot, names, false);
    }
    template <typename Function>
    static Symbol optional(Function& slot, const char* name) {
        return Symbol(slot, {name}, false);
    }

private:
    friend class SharedLibrary;
    template <typename Function>
    Symbol(Function& slot, std::initializer_list<const char*> names, bool required)
        : slot_(&slot),
          assign_([](void* slot, void* address) { *static_cast<Function*>(slot) = reinterpret_cast<Function>(address); }),
          names_(names),
          required_(required) {
        static_assert(std::is_pointer_v<Function> && std::is_function_v<std::remove_pointer_t<Function>>,
                      "a symbol's slot is a function pointer");
    }

    void* slot_;
    void (*assign_)(void* slot, void* address);
    std::vector<const char*> names_;
    bool required_;
};

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

    // Fills every slot of `table` with the first of its names the library
    // has (nullptr when it has none).  Returns the first required symbol the
    // library lacks ("" when it has them all), for a message such as
    // "libnvidia-ml.so.1 lacks nvmlInit_v2".
    std::string resolve(std::initializer_list<Symbol> table) const;

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
