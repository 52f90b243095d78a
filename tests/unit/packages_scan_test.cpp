#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>

#include <fmt/format.h>

#include "packages/python_packages.h"
#include "test_support.h"

using namespace provision;

namespace {

std::string tree(const std::string& name) { return test_support::source_path("tests/fixtures/site-packages/" + name); }

std::string version_of(const PackageIndex& index, const char* name) {
    const InstalledPackage* package = index.find(name);
    return package ? package->version : "(not found)";
}

void write_dist_info(const std::string& site, const std::string& name, const std::string& version) {
    test_support::write_file(fmt::format("{}/{}-{}.dist-info/METADATA", site, name, version),
                             fmt::format("Metadata-Version: 2.1\nName: {}\nVersion: {}\n", name, version));
}

}  // namespace

TEST_CASE("the 'all' tree holds every attention package", "[packages]") {
    const PackageIndex index = scan_site_packages({tree("all")});
    CHECK(index.packages().size() == 6);
    CHECK(index.skipped.empty());
    CHECK(version_of(index, "torch") == "2.11.0");
    CHECK(version_of(index, "flash-attn") == "2.8.3");
    CHECK(version_of(index, "Flash.Attn") == "2.8.3");
    CHECK(version_of(index, "flash_attn_3") == "3.0.0b1");
    CHECK(version_of(index, "sageattention") == "2.2.0");
    CHECK(version_of(index, "triton") == "3.6.0");
    CHECK(version_of(index, "xformers") == "0.0.32.post2");
    CHECK(index.find("flash_attn")->name == "flash_attn");  // as METADATA writes it
    CHECK(index.find("torch")->location == tree("all") + "/torch-2.11.0.dist-info");
    CHECK(index.find("numpy") == nullptr);
    CHECK(index.searched_dirs == std::vector<std::string>{tree("all")});
    CHECK(index.missing_dirs.empty());
}

TEST_CASE("the smaller trees hold what their names say", "[packages]") {
    CHECK(scan_site_packages({tree("torch-only")}).packages().size() == 1);
    CHECK(version_of(scan_site_packages({tree("torch-only")}), "torch") == "2.11.0");
    CHECK(scan_site_packages({tree("none")}).packages().empty());
    CHECK(version_of(scan_site_packages({tree("old-torch")}), "torch") == "1.13.1");
    const PackageIndex flash2_old = scan_site_packages({tree("flash2-old")});
    CHECK(version_of(flash2_old, "flash-attn") == "2.5.0");
    CHECK(version_of(flash2_old, "torch") == "2.11.0");
    const PackageIndex no_flash3 = scan_site_packages({tree("no-flash3")});
    CHECK(no_flash3.packages().size() == 5);
    CHECK(no_flash3.find("flash_attn_3") == nullptr);
    CHECK(no_flash3.find("flash_attn") != nullptr);
}

TEST_CASE("egg-info folders and files are read from PKG-INFO", "[packages]") {
    const PackageIndex index = scan_site_packages({tree("egg-info")});
    CHECK(index.skipped.empty());
    CHECK(version_of(index, "xformers") == "0.0.28.post1");
    CHECK(index.find("xformers")->location == tree("egg-info") + "/xformers-0.0.28.post1-py3.11.egg-info");
    CHECK(version_of(index, "triton") == "3.6.0");  // the single-file form
    CHECK(version_of(index, "torch") == "2.11.0");
}

TEST_CASE("broken metadata does not count, and says why", "[packages]") {
    const PackageIndex index = scan_site_packages({tree("broken")});
    CHECK(index.find("flash_attn") == nullptr);
    CHECK(index.find("torch") == nullptr);
    CHECK(index.find("numpy") == nullptr);  // the folder is torch's, whatever METADATA says
    REQUIRE(index.skipped.size() == 2);
    CHECK(index.skipped[0].location == tree("broken") + "/flash_attn-2.8.3.dist-info");
    CHECK(index.skipped[0].reason == "METADATA is unreadable: No such file or directory");
    CHECK(index.skipped[1].location == tree("broken") + "/torch-2.11.0.dist-info");
    CHECK(index.skipped[1].reason == "METADATA names 'numpy', not 'torch'");
    // A malformed version is still installed: the caller decides what it means.
    REQUIRE(index.find("xformers") != nullptr);
    CHECK(index.find("xformers")->version == "0.0.32-post2 (custom build)");
    CHECK_FALSE(Version::parse(index.find("xformers")->version));
}

TEST_CASE("metadata without Name or Version, and a dist-info that is a file", "[packages]") {
    test_support::TempDir site;
    test_support::write_file(site.file("a-1.0.dist-info/METADATA"), "Metadata-Version: 2.1\nVersion: 1.0\n");
    test_support::write_file(site.file("b-1.0.dist-info/METADATA"), "Metadata-Version: 2.1\nName: b\n");
    test_support::write_file(site.file("c-1.0.dist-info"), "Name: c\nVersion: 1.0\n");
    test_support::write_file(site.file("d.egg-info/PKG-INFO"), "Name: D\nVersion: 4\n");  // a development install
    test_support::write_file(site.file("unrelated.txt"), "Name: e\nVersion: 1.0\n");
    const PackageIndex index = scan_site_packages({site.path()});
    REQUIRE(index.skipped.size() == 3);
    CHECK(index.skipped[0].reason == "METADATA has no Name header");
    CHECK(index.skipped[1].reason == "METADATA has no Version header");
    CHECK(index.skipped[2].reason == "not a folder");
    REQUIRE(index.packages().size() == 1);
    CHECK(version_of(index, "d") == "4");
}

TEST_CASE("the first site-packages folder wins; missing folders are noted", "[packages]") {
    const std::string missing = tree("does-not-exist");
    const PackageIndex index = scan_site_packages({missing, tree("old-torch"), tree("all")});
    CHECK(version_of(index, "torch") == "1.13.1");
    CHECK(version_of(index, "xformers") == "0.0.32.post2");  // still found in the later folder
    CHECK(index.packages().size() == 7);  // the shadowed torch is listed, not found
    CHECK(index.searched_dirs == std::vector<std::string>{missing, tree("old-torch"), tree("all")});
    CHECK(index.missing_dirs == std::vector<std::string>{missing});

    // Inside one folder the first name in sorted order wins.
    test_support::TempDir site;
    write_dist_info(site.path(), "torch", "2.6.0");
    write_dist_info(site.path(), "torch", "2.5.1");
    CHECK(version_of(scan_site_packages({site.path()}), "torch") == "2.5.1");
}

TEST_CASE("PackageIndex::add keeps the first package of each name", "[packages]") {
    PackageIndex index;
    index.add({"Flash_Attn", "2.8.3", "/a"});
    index.add({"flash-attn", "2.5.0", "/b"});
    CHECK(index.packages().size() == 2);
    CHECK(index.find("FLASH.ATTN")->location == "/a");
}

TEST_CASE("site-packages globs expand to existing folders in pattern order", "[packages]") {
    test_support::TempDir root;
    for (const char* python : {"python3.12", "python3.10"})
        std::filesystem::create_directories(fmt::format("{}/venv/lib/{}/site-packages", root.path(), python));
    test_support::write_file(root.file("venv/lib/python3.13"), "a file, not a folder");
    std::filesystem::create_directories(root.file("usr/lib/python3/dist-packages"));

    const auto dirs = expand_site_package_globs({
        root.file("venv/lib/python3*/site-packages"),
        root.file("missing/lib/python3*/site-packages"),
        root.file("usr/lib/python3/dist-packages"),
        root.file("venv/lib/python3.12/site-packages"),  // already listed
        root.file("venv/lib/python3*"),
        "",
    });
    CHECK(dirs == std::vector<std::string>{
                      root.file("venv/lib/python3.10/site-packages"),
                      root.file("venv/lib/python3.12/site-packages"),
                      root.file("usr/lib/python3/dist-packages"),
                      root.file("venv/lib/python3.10"),
                      root.file("venv/lib/python3.12"),
                  });

    // The fixture trees through a glob: "no-*" matches only no-flash3.
    CHECK(expand_site_package_globs({tree("no-*")}) == std::vector<std::string>{tree("no-flash3")});
}

// What a scan costs is measured with the start-up (bench/start/startup-latency), not
// asserted here: a timed check failed by chance on a loaded machine under the
// sanitizers.
TEST_CASE("scanning 300 distributions reads their headers, never the long descriptions", "[packages]") {
    test_support::TempDir site;
    const std::string headers = [] {
        std::string text;
        for (int i = 0; i < 40; ++i) text += fmt::format("Requires-Dist: dependency-{}>=1.{}\n", i, i);
        return text;
    }();
    // The body looks like headers too: read as such, it would rename and
    // re-version every package.
    const std::string body = "\nName: impostor\nVersion: 9.9.9\n" + std::string(50000, 'd');
    for (int i = 0; i < 300; ++i)
        test_support::write_file(fmt::format("{}/package_{}-1.{}.0.dist-info/METADATA", site.path(), i, i),
                                 fmt::format("Metadata-Version: 2.1\nName: package_{}\nVersion: 1.{}.0\n{}{}", i,
                                             i, headers, body));
    const PackageIndex index = scan_site_packages({site.path()});
    CHECK(index.packages().size() == 300);
    CHECK(index.skipped.empty());
    CHECK(index.find("impostor") == nullptr);
    for (const int i : {0, 150, 299})
        CHECK(version_of(index, fmt::format("package_{}", i).c_str()) == fmt::format("1.{}.0", i));
}

TEST_CASE("folders written by older tools with '-' in the name still count", "[packages]") {
    test_support::TempDir site;
    test_support::write_file(site.file("typing-extensions-4.0.1.dist-info/METADATA"),
                             "Name: typing-extensions\nVersion: 4.0.1\n");
    test_support::write_file(site.file("flash_attn_3-3.0.0b1.dist-info/METADATA"), "Name: flash_attn\nVersion: 3\n");
    const PackageIndex index = scan_site_packages({site.path()});
    CHECK(version_of(index, "typing_extensions") == "4.0.1");
    CHECK(index.find("flash_attn") == nullptr);  // "flash_attn_3-..." is not flash_attn's folder
    REQUIRE(index.skipped.size() == 1);
    CHECK(index.skipped[0].reason == "METADATA names 'flash_attn', not 'flash_attn_3'");
}
