#include <catch2/catch.hpp>

#include "packages/python_packages.h"
#include "test_support.h"

using namespace provision;

TEST_CASE("METADATA headers: Name and Version up to the first blank line", "[packages]") {
    const MetadataHeaders headers = parse_metadata_headers(
        "Metadata-Version: 2.4\nName: torch\nVersion: 2.11.0\nSummary: Tensors\n\n"
        "Name: not-a-header\nVersion: 0.0.0\n");
    CHECK(headers.metadata_version == "2.4");
    CHECK(headers.name == "torch");
    CHECK(headers.version == "2.11.0");
}

TEST_CASE("METADATA headers: CRLF, case, spacing, folding and repeats", "[packages]") {
    const MetadataHeaders headers =
        parse_metadata_headers("metadata-version:2.1\r\nNAME:   flash_attn  \r\nversion:\t2.8.3\r\n"
                               "Name: second-name\r\n\r\nVersion: 9.9\r\n");
    CHECK(headers.metadata_version == "2.1");
    CHECK(headers.name == "flash_attn");  // the first occurrence wins
    CHECK(headers.version == "2.8.3");

    const MetadataHeaders folded = parse_metadata_headers("Name: a\nVersion:\n  1.0\nSummary: x\n  y\n");
    CHECK(folded.version == "1.0");

    const MetadataHeaders no_newline = parse_metadata_headers("Name: a\nVersion: 1.0");
    CHECK(no_newline.version == "1.0");
}

TEST_CASE("METADATA headers: missing fields and junk lines", "[packages]") {
    const MetadataHeaders empty = parse_metadata_headers("");
    CHECK_FALSE(empty.name);
    CHECK_FALSE(empty.version);

    const MetadataHeaders body_only = parse_metadata_headers("\nName: torch\nVersion: 2.0\n");
    CHECK_FALSE(body_only.name);

    const MetadataHeaders junk = parse_metadata_headers("this is not a header\n  continued\nName: x\n");
    CHECK(junk.name == "x");
    CHECK_FALSE(junk.version);
}

TEST_CASE("the header block is read from a file up to the first blank line", "[packages]") {
    test_support::TempDir dir;
    std::string headers = "Metadata-Version: 2.1\nName: big\nVersion: 1.0\n";
    for (int i = 0; i < 2000; ++i) headers += "Classifier: Programming Language :: Python :: 3\n";  // ~100 KB
    const std::string body = "\nbody line\n" + std::string(200000, 'x');
    test_support::write_file(dir.file("METADATA"), headers + body);

    std::string error;
    const auto block = read_metadata_header_block(dir.file("METADATA"), error);
    REQUIRE(block);
    CHECK(*block == headers + "\n");  // the blank line straddles no chunk boundary unnoticed
    CHECK(parse_metadata_headers(*block).version == "1.0");

    test_support::write_file(dir.file("NO_BODY"), "Name: a\nVersion: 2");
    const auto whole = read_metadata_header_block(dir.file("NO_BODY"), error);
    REQUIRE(whole);
    CHECK(*whole == "Name: a\nVersion: 2");

    CHECK_FALSE(read_metadata_header_block(dir.file("MISSING"), error));
    CHECK(error == "No such file or directory");
}

TEST_CASE("a blank line split across read chunks is found", "[packages]") {
    test_support::TempDir dir;
    for (std::size_t pad : {16 * 1024 - 2, 16 * 1024 - 1, 16 * 1024, 16 * 1024 + 1}) {
        // Headers of exactly `pad` bytes before the blank line, CRLF and LF.
        for (const std::string newline : {"\n", "\r\n"}) {
            std::string headers = "Name: a" + newline + "Version: 1" + newline;
            const std::string filler_key = "X: ";
            const std::size_t filler = pad - headers.size() - filler_key.size() - newline.size();
            headers += filler_key + std::string(filler, 'y') + newline;
            REQUIRE(headers.size() == pad);
            test_support::write_file(dir.file("METADATA"), headers + newline + "body\n");
            std::string error;
            const auto block = read_metadata_header_block(dir.file("METADATA"), error);
            REQUIRE(block);
            INFO("pad " << pad << " crlf " << (newline.size() == 2));
            CHECK(*block == headers + newline);
        }
    }
}

TEST_CASE("the header block of METADATA text in memory", "[packages]") {
    CHECK(metadata_header_block("Name: a\n\nbody\n\n") == "Name: a\n\n");
    CHECK(metadata_header_block("Name: a\r\n\r\nbody") == "Name: a\r\n\r\n");
    CHECK(metadata_header_block("Name: a\nVersion: 1") == "Name: a\nVersion: 1");
    CHECK(metadata_header_block("\nName: a\n") == "\n");
    CHECK(metadata_header_block("\r\nName: a\n") == "\r\n");
    CHECK(metadata_header_block("Name: a\n \nVersion: 1\n") == "Name: a\n \nVersion: 1\n");  // a space is no blank line
    CHECK(metadata_header_block("") == "");
}
