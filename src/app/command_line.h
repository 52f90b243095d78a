// provision's command line: its own options (every flag of the settings
// table, app/settings.h), then the COMMAND, from the first argument that is
// not one of provision's own or from '--'.  Read here, into Options, before
// any work starts; --help, --version and --print-recipes are answered here.
#pragma once

#include <string>
#include <vector>

#include "app/options.h"

namespace provision {

// What reading the command line came to: a run to carry out, or a question
// answered on stdout (--help, --version, --print-recipes), which ends with
// exit 0.
enum class CommandLineOutcome { run, answered };

// Reads `arguments` (argv without the program's name) and the settings'
// variables into `options`.  Throws Error(usage) for a bad command line or
// setting; `options.publish` then names where that refused run may still say
// so (app/publishing.h, publish_stopped_run): the --node-labels and
// --metrics it gives, none where the run's outputs could not be written as
// asked.  Other stages' errors (a --print-recipes folder that cannot be
// written) pass through.
CommandLineOutcome read_command_line(const std::vector<std::string>& arguments, Options& options);

// Whether --json stands among provision's own arguments: before '--' and
// before the first argument that is no option of provision's (the COMMAND's
// first word), a flag's value skipped.  Known before the command line is
// read, so that even its errors take the JSON form: `provision sh -c x --json`
// passes --json to the COMMAND and leaves provision's errors in words.
bool wants_json(const std::vector<std::string>& arguments);

}  // namespace provision
