// Small helpers shared by the unit tests.
#pragma once

#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <stdlib.h>

#include <catch2/catch.hpp>

#include "core/error.h"
#include "recipe/recipe_loader.h"

namespace test_support {

// The message of the Error that loading `paths` throws ("" when none), and
// its exit code in `*code`.
inline std::string recipe_load_error(const std::vector<std::string>& paths, provision::ExitCode* code = nullptr) {
    try {
        provision::load_recipes(paths);
    } catch (const provision::Error& error) {
        if (code) *code = error.code();
        return error.what();
    }
    return "";
}

// The message of loading `paths`, which must fail as a malformed recipe (exit 3).
inline std::string malformed_recipe_message(const std::vector<std::string>& paths) {
    provision::ExitCode code = provision::ExitCode::ok;
    const std::string message = recipe_load_error(paths, &code);
    CHECK(code == provision::ExitCode::invalid_input);
    return message;
}

// Sets (or unsets) an environment variable for one scope.
class ScopedEnv {
public:
    ScopedEnv(const char* name, const std::optional<std::string>& value) : name_(name) {
        if (const char* old = std::getenv(name)) old_ = old;
        if (value) setenv(name, value->c_str(), 1);
        else unsetenv(name);
    }
    ~ScopedEnv() {
        if (old_) setenv(name_, old_->c_str(), 1);
        else unsetenv(name_);
    }
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

private:
    const char* name_;
    std::optional<std::string> old_;
};

inline std::string source_path(const std::string& relative) {
    return std::string(PROVISION_SOURCE_DIR) + "/" + relative;
}

// A fresh temporary folder, removed with everything in it at scope exit.
class TempDir {
public:
    TempDir() {
        std::string pattern = (std::filesystem::temp_directory_path() / "provision-unit-XXXXXX").string();
        path_ = mkdtemp(pattern.data());
    }
    ~TempDir() {
        std::error_code ignored;
        std::filesystem::permissions(path_, std::filesystem::perms::owner_all, std::filesystem::perm_options::add,
                                     ignored);
        std::filesystem::remove_all(path_, ignored);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    std::string file(const std::string& name) const { return path_ + "/" + name; }
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

inline void write_file(const std::string& path, const std::string& contents) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << contents;
}

inline std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace test_support
