// The words for the workload's Python: its environment and how it was found,
// as the JSON report names them (docs/DESIGN.md) and as a person reads them.
#pragma once

#include "python/interpreter_locator.h"
#include "python/python_environment.h"

namespace provision {

const char* environment_name(EnvironmentKind kind);
const char* source_name(InterpreterSource source);   // the JSON report's
const char* source_words(InterpreterSource source);  // the summary's

}  // namespace provision
