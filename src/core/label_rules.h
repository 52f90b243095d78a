// Kubernetes' rules for node label names and values, as the API server
// checks them (k8s.io/apimachinery validation: IsQualifiedName,
// IsValidLabelValue) and Node Feature Discovery applies them: a label that
// breaks one is dropped, so provision leaves it out itself and says why.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace provision {

// A label's prefix: a lowercase DNS subdomain (RFC 1123) of at most 253
// characters, outside the kubernetes.io and k8s.io namespaces that
// Kubernetes keeps for itself (NFD's own feature.node.kubernetes.io and
// profile.node.kubernetes.io, and their subdomains, excepted).  nullopt when
// valid, else why not.
std::optional<std::string> label_prefix_problem(std::string_view prefix);

// The part after the prefix: 1 to 63 characters of [A-Za-z0-9._-],
// alphanumeric at both ends.
std::optional<std::string> label_name_problem(std::string_view name);

// "PREFIX/NAME", or "NAME" alone.
std::optional<std::string> label_key_problem(std::string_view key);

// Empty, or 1 to 63 characters of [A-Za-z0-9._-], alphanumeric at both ends.
std::optional<std::string> label_value_problem(std::string_view value);

// A GPU's name as GPU Feature Discovery writes it into nvidia.com/gpu.product:
// blanks become '-' ("NVIDIA H100 80GB HBM3" -> "NVIDIA-H100-80GB-HBM3").
// The result may still break the value rules (quotes, non-ASCII, length).
std::string gpu_product_value(std::string_view gpu_name);

}  // namespace provision
