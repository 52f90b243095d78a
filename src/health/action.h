// What a finding asks to be done, and by whom: the person who writes the
// container's command line or pod spec, the image's author, the node's
// operator (or the fleet's remediation controller), the job's launcher, or
// nobody.  Filled in by signal (health/actions.h), once all findings are in.
#pragma once

#include <string>
#include <string_view>

namespace provision {

// Who acts.  Label and metric values: bounded, never free text.
enum class Actor { none, container, image, node, job };
std::string_view to_string(Actor actor);  // "none", "container", "image", "node", "job"

// The node's action in NVIDIA NVSentinel's vocabulary (RecommendedAction,
// NVIDIA/NVSentinel data-models/protobufs/health_event.proto), so that a
// remediation controller can act on the metric alone.
enum class FleetAction {
    none,
    component_reset,
    contact_support,
    run_fielddiag,
    restart_vm,
    restart_bm,
    replace_vm,
    run_dcgmeud,
    restart_app,
    unknown
};
std::string_view to_string(FleetAction action);  // "NONE", "COMPONENT_RESET", ... as the proto spells them

struct Action {
    Actor actor = Actor::none;
    FleetAction fleet = FleetAction::none;
    std::string what;        // the change, concretely; "" with Actor::none
    std::string docker;      // the container: the `docker run` options; "" where none
    std::string kubernetes;  // the container: the pod-spec field; "" where none
};

}  // namespace provision
