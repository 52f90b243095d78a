// Environment variables that change what runs, or on which GPU, beyond an
// attention setting: the dynamic loader's (LD_*), shell and interpreter
// start-up hooks (BASH_ENV, ENV, PYTHONSTARTUP, NODE_OPTIONS, ...) and device
// selection (CUDA_VISIBLE_DEVICES, ...).  A recipe sets one only when the
// same table lists it in `allow_sensitive`, and every run that writes one
// warns.  The list lives in code, not in recipes: the recipes it polices
// must not be able to shorten it.
#pragma once

#include <string_view>

namespace provision {

bool is_sensitive_variable(std::string_view name);

}  // namespace provision
