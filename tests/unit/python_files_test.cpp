// What discovery reads from single files: interpreter names, "#!" lines,
// pyvenv.cfg, and the Python a wheel was built for.
#include <catch2/catch.hpp>

#include "python/interpreter_locator.h"
#include "python/python_build.h"
#include "python/python_version.h"
#include "python/pyvenv_config.h"
#include "python/shebang.h"

using namespace provision;

TEST_CASE("Python versions from text and from interpreter file names", "[python]") {
    CHECK(PythonVersion::parse("3.12")->str() == "3.12");
    CHECK(PythonVersion::parse("3.12.3")->str() == "3.12");
    CHECK(PythonVersion::parse("3.10.14.final.0")->str() == "3.10");
    CHECK(PythonVersion::parse("3.13.0rc1")->str() == "3.13");
    CHECK_FALSE(PythonVersion::parse("3"));
    CHECK_FALSE(PythonVersion::parse("three"));
    CHECK(*PythonVersion::parse("3.9") < *PythonVersion::parse("3.10"));

    CHECK(PythonVersion::from_file_name("python3.12")->str() == "3.12");
    CHECK_FALSE(PythonVersion::from_file_name("python3"));
    CHECK_FALSE(PythonVersion::from_file_name("python"));
    CHECK_FALSE(PythonVersion::from_file_name("python3.12-config"));
    CHECK(is_python_name("python"));
    CHECK(is_python_name("python3"));
    CHECK(is_python_name("python3.11"));
    CHECK_FALSE(is_python_name("ipython3"));
    CHECK_FALSE(is_python_name("python3-config"));
    CHECK_FALSE(is_python_name("vllm"));
}

TEST_CASE("#! lines name the interpreter directly, through env, or through pip's long-path form", "[python]") {
    SECTION("directly, with options") {
        const auto shebang = parse_shebang("#!/opt/venv/bin/python3 -s\nimport sys\n");
        REQUIRE(shebang);
        CHECK(shebang->program == "/opt/venv/bin/python3");
        CHECK_FALSE(shebang->through_env);
        CHECK(shebang->arguments == std::vector<std::string>{"-s"});
    }
    SECTION("through /usr/bin/env, with -S and assignments") {
        const auto plain = parse_shebang("#!/usr/bin/env python3\r\n");
        REQUIRE(plain);
        CHECK(plain->program == "python3");
        CHECK(plain->through_env);
        const auto split = parse_shebang("#!/usr/bin/env -S LC_ALL=C python3.12 -I\n");
        REQUIRE(split);
        CHECK(split->program == "python3.12");
        CHECK(split->arguments == std::vector<std::string>{"-I"});
    }
    SECTION("pip's /bin/sh form for paths too long for a #! line") {
        const auto shebang =
            parse_shebang("#!/bin/sh\n'''exec' \"/very/long/path/venv/bin/python\" \"$0\" \"$@\"\n' '''\n");
        REQUIRE(shebang);
        CHECK(shebang->program == "/very/long/path/venv/bin/python");
    }
    SECTION("not a script") {
        CHECK_FALSE(parse_shebang("\x7f" "ELF\x02\x01"));
        CHECK_FALSE(parse_shebang("import sys\n"));
        CHECK_FALSE(parse_shebang("#!\n"));
        CHECK(parse_shebang("#!/bin/bash\n")->program == "/bin/bash");
        // pip's exec line naming nothing: the "#!" line's own program (a fuzz find).
        CHECK(parse_shebang("#!/bin/sh\n'''exec' \n")->program == "/bin/sh");
        CHECK(parse_shebang("#!/bin/sh\n'''exec' \"\" \"$0\"\n")->program == "/bin/sh");
    }
}

TEST_CASE("interpreter options that change which folders it reads", "[python]") {
    CHECK_FALSE(interpreter_flags({"app.py", "-s"}).no_user_site);
    CHECK(interpreter_flags({"-s", "app.py"}).no_user_site);
    CHECK(interpreter_flags({"-u", "-sE", "app.py"}).ignore_environment);
    const auto isolated = interpreter_flags({"-I", "-m", "vllm"});
    CHECK(isolated.no_user_site);
    CHECK(isolated.ignore_environment);
    CHECK_FALSE(interpreter_flags({"-m", "site", "-s"}).no_user_site);
    CHECK_FALSE(interpreter_flags({"-c", "-s"}).no_user_site);
    CHECK_FALSE(interpreter_flags({"-X", "-s"}).no_user_site);  // "-s" is -X's value
    CHECK(interpreter_flags({"-S", "app.py"}).no_site);
    CHECK(interpreter_flags({"-IS", "app.py"}).no_site);
    CHECK_FALSE(interpreter_flags({"-s", "app.py"}).no_site);
    CHECK_FALSE(interpreter_flags({"app.py", "-S"}).no_site);
}

TEST_CASE("pyvenv.cfg: home, system site-packages and the version", "[python]") {
    const PyvenvConfig venv = parse_pyvenv_config(
        "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\nexecutable = /usr/bin/python3.12\n");
    CHECK(venv.home == "/usr/bin");
    CHECK_FALSE(venv.include_system_site_packages);
    CHECK(venv.version->str() == "3.12");

    // uv and virtualenv write version_info, which wins over version.
    const PyvenvConfig uv = parse_pyvenv_config(
        "home = /root/.local/share/uv/python/cpython-3.11.9-linux-x86_64-gnu/bin\r\n"
        "implementation = CPython\r\nuv = 0.4.0\r\nversion_info = 3.11.9\r\nversion = 3.99\r\n"
        "Include-System-Site-Packages = True\r\n");
    CHECK(uv.version->str() == "3.11");
    CHECK(uv.include_system_site_packages);

    CHECK_FALSE(parse_pyvenv_config("garbage\n=\n").version);
    // site.py's default when the key is missing is "true"; any other value is false.
    CHECK(parse_pyvenv_config("home = /usr/bin\n").include_system_site_packages);
    CHECK_FALSE(parse_pyvenv_config("include-system-site-packages = yes\n").include_system_site_packages);
    // A lone CR ends a line too (site.py reads the file in text mode).
    CHECK(parse_pyvenv_config("home = /a\rversion = 3.11.2\r").version->str() == "3.11");
}

TEST_CASE("the Python a distribution was built for", "[python]") {
    SECTION("from WHEEL tags") {
        const auto cp310 = python_build_from_wheel(
            "Wheel-Version: 1.0\nGenerator: bdist_wheel (0.43.0)\nRoot-Is-Purelib: false\n"
            "Tag: cp310-cp310-linux_x86_64\n");
        REQUIRE(cp310);
        CHECK(cp310->describe() == "Python 3.10");
        CHECK(cp310->evidence == "WHEEL tag cp310-cp310-linux_x86_64");
        CHECK(cp310->imports_on(*PythonVersion::parse("3.10")));
        CHECK_FALSE(cp310->imports_on(*PythonVersion::parse("3.12")));

        const auto abi3 = python_build_from_wheel("Tag: cp39-abi3-manylinux_2_28_x86_64\n");
        REQUIRE(abi3);
        CHECK(abi3->describe() == "Python 3.9 or newer");
        CHECK(abi3->imports_on(*PythonVersion::parse("3.12")));
        CHECK_FALSE(abi3->imports_on(*PythonVersion::parse("3.8")));

        CHECK_FALSE(python_build_from_wheel("Tag: py3-none-any\n"));
        CHECK_FALSE(python_build_from_wheel(""));
    }
    SECTION("from the extension names RECORD lists") {
        const auto build = python_build_from_record(
            "flash_attn/__init__.py,sha256=abc,12\n"
            "flash_attn/bert_padding.cpython-310.pyc,,\n"
            "flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so,sha256=def,345\n");
        REQUIRE(build);
        CHECK(build->describe() == "Python 3.10");
        CHECK(build->evidence == "RECORD lists flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so");
        CHECK_FALSE(python_build_from_record("torch/__init__.py,,\ntorch/_C.abi3.so,,\n"));
        CHECK(python_build_from_record("x/_C.cpython-313t-x86_64-linux-gnu.so,,")->describe() == "Python 3.13");
    }
}
