// The shared value parsers and text helpers: durations, booleans, UTF-8
// repair, printable text and regular-file reading.
#include <sys/stat.h>

#include <chrono>

#include <catch2/catch.hpp>

#include "core/error.h"
#include "core/regular_file.h"
#include "core/setting_values.h"
#include "core/text.h"
#include "test_support.h"

using provision::Error;
using provision::parse_boolean;
using provision::parse_duration;

TEST_CASE("parse_duration: seconds to milliseconds, refusing what cannot be a time limit") {
    CHECK(parse_duration("5", "X", 3600) == std::chrono::milliseconds(5000));
    CHECK(parse_duration(" 0.25 ", "X", 3600) == std::chrono::milliseconds(250));
    CHECK(parse_duration("1e1", "X", 3600) == std::chrono::milliseconds(10000));
    CHECK(parse_duration("0.001", "X", 3600) == std::chrono::milliseconds(1));
    CHECK(parse_duration("3600", "X", 3600) == std::chrono::milliseconds(3600000));
    for (const char* bad : {"", "nan", "NaN", "inf", "-inf", "1e20", "1e400", "1e-9", "0.0004", "0.0005", "0.00099", "0", "-1", "abc",
                            "5s", "3600.5", "0x10"}) {
        INFO(bad);
        try {
            (void)parse_duration(bad, "PROVISION_X", 3600);
            FAIL("accepted");
        } catch (const Error& error) {
            CHECK(error.code() == provision::ExitCode::usage);
            CHECK_THAT(error.what(), Catch::StartsWith(std::string("PROVISION_X=") + bad + ":"));
        }
    }
}

TEST_CASE("parse_boolean: the four spellings of each answer, anything else refused") {
    for (const char* yes : {"1", "true", "True", "YES", "on", " on\n"}) CHECK(parse_boolean(yes, "X"));
    for (const char* no : {"0", "false", "No", "OFF"}) CHECK_FALSE(parse_boolean(no, "X"));
    for (const char* bad : {"", "2", "y", "enabled", "truee"}) CHECK_THROWS_AS(parse_boolean(bad, "X"), Error);
}

TEST_CASE("valid_utf8 keeps well-formed text and replaces each bad byte with U+FFFD") {
    using provision::valid_utf8;
    CHECK(valid_utf8("plain") == "plain");
    CHECK(valid_utf8("\xF0\x9F\x98\x80 \xC3\xA9") == "\xF0\x9F\x98\x80 \xC3\xA9");
    CHECK(valid_utf8("a\xFFz") == "a\xEF\xBF\xBDz");
    CHECK(valid_utf8("\xC0\xAF") == "\xEF\xBF\xBD\xEF\xBF\xBD");  // overlong '/'
    CHECK(valid_utf8("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // a surrogate
    CHECK(valid_utf8("\xF0\x9F\x98") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // cut short
}

TEST_CASE("printable escapes control characters and cuts long text at a character boundary") {
    using provision::printable;
    CHECK(printable("GPU\x1b[31m\r\n\x07") == "GPU\\x1b[31m\\x0d\\x0a\\x07");
    CHECK(printable(std::string("a\0b", 3)) == "a\\x00b");
    CHECK(printable("\xC2\x9B" "2J") == "\\u009b2J");  // C1 CSI
    CHECK(printable("\xF0\x9F\x98\x80") == "\xF0\x9F\x98\x80");
    CHECK(printable(std::string(100, 'a'), 10) == std::string(10, 'a') + "... (100 bytes in all)");
    CHECK(printable("aaaa\xC3\xA9zz", 5) == "aaaa\xC3\xA9... (8 bytes in all)");
}

TEST_CASE("read_regular_file refuses what is not a regular file, without blocking, and caps the size") {
    test_support::TempDir dir;
    const std::string fifo = dir.file("fifo");
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    std::string error;
    CHECK_FALSE(provision::read_regular_file(fifo, 100, error));
    CHECK(error == "is a FIFO, not a regular file");
    CHECK_FALSE(provision::read_regular_file("/dev/zero", 100, error));
    CHECK(error == "is a character device, not a regular file");
    CHECK_FALSE(provision::read_regular_file(dir.path(), 100, error));
    CHECK(error == "is a folder, not a regular file");
    test_support::write_file(dir.file("f"), "0123456789");
    CHECK(*provision::read_regular_file(dir.file("f"), 10, error) == "0123456789");
    CHECK_FALSE(provision::read_regular_file(dir.file("f"), 9, error));
    CHECK(error == "larger than the limit of 9 bytes");
    CHECK(*provision::read_regular_file(dir.file("f"), 4, error, true) == "0123");
}
