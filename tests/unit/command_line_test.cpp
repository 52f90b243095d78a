// The command line's one question asked before it is read: whether --json
// is provision's own (app/command_line.h).
#include <catch2/catch.hpp>

#include "app/command_line.h"

using provision::wants_json;

TEST_CASE("--json is provision's only among its own arguments, before the COMMAND") {
    CHECK(wants_json({"--json"}));
    CHECK(wants_json({"--check", "--json", "--", "python", "app.py"}));
    CHECK(wants_json({"--gpu-fixture", "h100.toml", "--json"}));
    CHECK(wants_json({"--gpu-fixture=h100.toml", "--json", "sh"}));
    // An option provision does not know is a usage error, answered in JSON.
    CHECK(wants_json({"--no-such-option", "--json"}));

    CHECK_FALSE(wants_json({}));
    CHECK_FALSE(wants_json({"--check"}));
    // The COMMAND's own --json, after '--' or after its first word.
    CHECK_FALSE(wants_json({"--", "tool", "--json"}));
    CHECK_FALSE(wants_json({"--gpu-fixture", "bad.toml", "sh", "-c", "echo hi", "--json"}));
    CHECK_FALSE(wants_json({"python", "app.py", "--json"}));
    // A flag's value is not an argument of its own, even when it reads "--json".
    CHECK_FALSE(wants_json({"--workload", "--json"}));
    CHECK_FALSE(wants_json({"--json=false"}));
}
