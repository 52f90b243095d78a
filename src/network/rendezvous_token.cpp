#include "network/rendezvous_token.h"

#include <sodium.h>
#include <sys/random.h>

#include <array>
#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "core/regular_file.h"

namespace provision::network {
namespace {

std::string hex_of(const unsigned char* bytes, std::size_t size) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string text(2 * size, '0');
    for (std::size_t i = 0; i < size; ++i) {
        text[2 * i] = kDigits[bytes[i] >> 4];
        text[2 * i + 1] = kDigits[bytes[i] & 0xf];
    }
    return text;
}

}  // namespace

std::optional<RendezvousToken> RendezvousToken::read_file(const std::string& path, std::string& why) {
    auto read = read_regular_file(path, kMostTokenBytes, why);
    if (!read) return std::nullopt;
    std::string secret = std::move(*read);
    if (!secret.empty() && secret.back() == '\n') secret.pop_back();
    if (!secret.empty() && secret.back() == '\r') secret.pop_back();
    if (secret.empty()) {
        why = "it is empty";
        return std::nullopt;
    }
    return RendezvousToken(std::move(secret));
}

RendezvousToken RendezvousToken::of(std::string secret) { return RendezvousToken(std::move(secret)); }

std::string RendezvousToken::prove(std::string_view what) const {
    std::array<unsigned char, crypto_auth_hmacsha256_BYTES> mac{};
    crypto_auth_hmacsha256_state state;
    crypto_auth_hmacsha256_init(&state, reinterpret_cast<const unsigned char*>(secret_.data()), secret_.size());
    crypto_auth_hmacsha256_update(&state, reinterpret_cast<const unsigned char*>(what.data()), what.size());
    crypto_auth_hmacsha256_final(&state, mac.data());
    sodium_memzero(&state, sizeof state);
    return hex_of(mac.data(), mac.size());
}

bool RendezvousToken::proves(std::string_view proof, std::string_view what) const {
    const std::string expected = prove(what);
    // The length is public (64 digits); the digits are compared in constant time.
    return proof.size() == expected.size() && sodium_memcmp(proof.data(), expected.data(), expected.size()) == 0;
}

std::string fresh_nonce() {
    std::array<unsigned char, 16> bytes{};
    std::size_t filled = 0;
    while (filled < bytes.size()) {
        const ssize_t got = ::getrandom(bytes.data() + filled, bytes.size() - filled, 0);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            // No getrandom (a seccomp filter): libsodium's own source.
            randombytes_buf(bytes.data() + filled, bytes.size() - filled);
            break;
        }
        filled += static_cast<std::size_t>(got);
    }
    return hex_of(bytes.data(), bytes.size());
}

}  // namespace provision::network
