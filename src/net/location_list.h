// PROVISION_RECIPE is a colon-separated list, like PATH, but a recipe may be
// a URL, and URLs hold colons of their own ("https://", ":8443",
// "user:token@").  This splits such a list without cutting a URL apart.
#pragma once

#include <string>
#include <vector>

namespace provision {

// Splits at ':' except: the ':' of "http://" / "https://", and inside a
// URL's authority (between "://" and the next '/', '?' or '#') a ':' that
// starts a port (a digit follows), sits in an IPv6 [literal], or separates
// userinfo (an '@' follows before the authority ends).  Empty items are
// dropped.  A ':' in a URL's path still separates: write such a URL with
// %3A, or pass it with --recipe.
std::vector<std::string> split_location_list(const std::string& text);

}  // namespace provision
