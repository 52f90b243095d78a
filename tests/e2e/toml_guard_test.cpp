// Inputs that reach undefined behaviour inside Debian 12's toml++ 3.3 (a code
// point of U+00A1..U+0499 where it tests for whitespace): provision reads
// them as a fixed toml++ would, through the built binary (the sanitizer
// stage runs this under UBSan, where reaching the library's unreachable
// branch ends the process).
#include <catch2/catch.hpp>

#include <fstream>

#include "harness.h"
#include "support/reliability_record.h"

TEST_CASE("a fixture that once reached toml++'s unreachable branch is a positioned error") {
    e2e::TempDir dir;
    const std::string input = e2e::read_file(
        e2e::source_path("tests/fuzz/regressions/fuzz_gpu_fixture/non-ascii-after-quote-in-bare-value.toml"));
    e2e::write_file(dir.file("machine.toml"), input);
    const auto result = e2e::provision({"--gpu-fixture", dir.file("machine.toml"), "--no-validate", "--env-file",
                                        dir.file("env")});
    CHECK(result.exit_code == 3);
    CHECK(result.err.find(dir.file("machine.toml") + ":2:30:") != std::string::npos);
    reliability::record("recipe input", "a fixture with U+00BA after a quote inside a bare value (reached "
                        "__builtin_unreachable in toml++ 3.3)",
                        "exit 3 with file:line:column; the library never sees a code point it cannot classify");
}

TEST_CASE("valid TOML with the code points toml++ 3.3 cannot classify reads back exactly") {
    e2e::TempDir dir;
    e2e::write_file(dir.file("mine.toml"),
                    "# Größe ²³ · Ω — ключ\n[workloads.generic.env]\nPROVISION_NOTE = \"\"\"\\\n  é ü ²\"\"\"\n"
                    "PROVISION_GREEK = 'αβγ'\n");
    const auto result = e2e::provision({"--gpu-fixture", e2e::gpu_fixture("h100"), "--no-validate", "--json",
                                        "--recipe", dir.file("mine.toml"), "--env-file", dir.file("env")});
    INFO(result.err);
    CHECK(result.exit_code == 0);
    const auto report = e2e::report(result);
    CHECK(report["env"]["PROVISION_NOTE"] == "é ü ²");
    CHECK(report["env"]["PROVISION_GREEK"] == "αβγ");
    reliability::record("recipe input", "valid TOML with U+00A1..U+0499 in comments, strings and after a "
                        "line-ending backslash",
                        "read exactly; values unchanged in the env file and the report");
}
