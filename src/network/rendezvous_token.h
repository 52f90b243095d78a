// The job's shared secret, for a rendezvous that only the job's own nodes may
// join (--rendezvous-token-file: a mounted Kubernetes Secret, a file the
// batch system writes for the job).  A peer proves it holds the token without
// sending it: each side sends a fresh random nonce, and answers the other's
// with an HMAC-SHA256 over it (libsodium), which the other compares in
// constant time.  The token is read once, kept in this object alone and
// never formatted: no report, label, metric, message or environment sees it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace provision::network {

// The most a token file may hold (a Secret's value is a few dozen bytes).
constexpr std::size_t kMostTokenBytes = 4096;

class RendezvousToken {
public:
    // The token in `path`: its bytes, less a trailing newline (as `echo`
    // and `kubectl create secret --from-file` leave one).  nullopt with
    // `why` for a file that cannot be read, is empty or is too large.
    static std::optional<RendezvousToken> read_file(const std::string& path, std::string& why);
    // For tests: the token these bytes are.
    static RendezvousToken of(std::string secret);

    // The proof of holding the token, over `what` (lowercase hex, 64 digits).
    std::string prove(std::string_view what) const;
    // Whether `proof` is this token's proof over `what`: every byte compared.
    bool proves(std::string_view proof, std::string_view what) const;

private:
    explicit RendezvousToken(std::string secret) : secret_(std::move(secret)) {}
    std::string secret_;
};

// 16 random bytes as 32 hex digits (getrandom): a nonce no one can guess.
std::string fresh_nonce();

}  // namespace provision::network
