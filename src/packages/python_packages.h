// Installed Python packages, read without starting Python: PEP 503 names,
// PEP 440 versions, requirement specifiers and the site-packages scan.
#pragma once

#include "packages/metadata.h"
#include "packages/package_name.h"
#include "packages/requirement.h"
#include "packages/site_packages.h"
#include "packages/version.h"
