#include <catch2/catch.hpp>

#include "net/location_list.h"

using provision::split_location_list;
using List = std::vector<std::string>;

TEST_CASE("split_location_list splits plain paths at colons, like PATH") {
    CHECK(split_location_list("/etc/provision/a.toml:/srv/recipes") == List{"/etc/provision/a.toml", "/srv/recipes"});
    CHECK(split_location_list("::a.toml::") == List{"a.toml"});
    CHECK(split_location_list("").empty());
}

TEST_CASE("split_location_list keeps URLs whole: scheme, port, userinfo, IPv6") {
    CHECK(split_location_list("https://example.com/r.toml") == List{"https://example.com/r.toml"});
    CHECK(split_location_list("/etc/a.toml:https://example.com:8443/r.toml?v=1:/srv/b.toml") ==
          List{"/etc/a.toml", "https://example.com:8443/r.toml?v=1", "/srv/b.toml"});
    CHECK(split_location_list("HTTPS://alice:t0ken@example.com/r.toml:http://[::1]:8080/x.toml") ==
          List{"HTTPS://alice:t0ken@example.com/r.toml", "http://[::1]:8080/x.toml"});
    CHECK(split_location_list("https://example.com:/etc/a.toml") == List{"https://example.com", "/etc/a.toml"});
}

TEST_CASE("split_location_list does not take other schemes or bare words for URLs") {
    CHECK(split_location_list("file://x/a.toml") == List{"file", "//x/a.toml"});
    CHECK(split_location_list("https:/one-slash") == List{"https", "/one-slash"});
}
