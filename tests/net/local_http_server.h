// A tiny HTTP/1.1 peer on 127.0.0.1 for the network tests: it can answer
// properly, stall, drop the connection midway, or send garbage.  It is the
// test's own counterpart to libcurl, so it is hand-written on purpose and
// deliberately minimal: one thread per connection, one request per
// connection, "Connection: close".
#pragma once

#include <algorithm>
#include <atomic>
#include <cctype>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

namespace net_test {

struct Request {
    std::string method;  // "" when the peer did not speak HTTP (a TLS handshake, say)
    std::string target;
    std::map<std::string, std::string> headers;  // names in lower case
    std::string body;

    std::string header(const std::string& lower_name) const {
        const auto it = headers.find(lower_name);
        return it == headers.end() ? std::string() : it->second;
    }
};

// What the server does once it has read a request.
struct Reply {
    std::string bytes;       // written as they are, then the connection is closed...
    bool hold_open = false;  // ...unless this is set: then it stays open and silent until the server stops
};

using Handler = std::function<Reply(const Request&)>;

inline std::string http_response(int status, const std::string& reason, const std::string& body,
                                 const std::vector<std::string>& extra_headers = {}) {
    std::string text = "HTTP/1.1 " + std::to_string(status) + " " + reason + "\r\n";
    for (const auto& header : extra_headers) text += header + "\r\n";
    text += "Content-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
    return text;
}

inline Reply respond(int status, const std::string& reason, const std::string& body = "",
                     const std::vector<std::string>& extra_headers = {}) {
    return {http_response(status, reason, body, extra_headers), false};
}

// Accepts, reads the request, never answers.
inline Reply stall() { return {"", true}; }

// Promises a body, sends part of it, and hangs up.
inline Reply drop_midway() {
    return {"HTTP/1.1 200 OK\r\nContent-Length: 4096\r\nConnection: close\r\n\r\n[partial]\nname = \"cut", false};
}

// Not HTTP at all.
inline Reply garbage() { return {"\x01\x02 this is not HTTP \xff\xfe\r\n\r\n", false}; }

// A body without Content-Length (chunked), so only the reader can tell its size.
inline Reply chunked(const std::string& body) {
    char size[32];
    std::snprintf(size, sizeof size, "%zx", body.size());
    return {std::string("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n") + size +
                "\r\n" + body + "\r\n0\r\n\r\n",
            false};
}

class LocalHttpServer {
public:
    explicit LocalHttpServer(Handler handler) : handler_(std::move(handler)) {
        // A proxy from the environment must not stand between libcurl and loopback.
        setenv("NO_PROXY", "127.0.0.1,localhost", 1);
        setenv("no_proxy", "127.0.0.1,localhost", 1);
        listener_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (listener_ < 0) throw std::runtime_error("socket() failed");
        const int yes = 1;
        ::setsockopt(listener_, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
        sockaddr_in address{};
        address.sin_family = AF_INET;
        address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        address.sin_port = 0;  // ephemeral
        socklen_t length = sizeof address;
        if (::bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
            ::listen(listener_, 64) != 0 ||
            ::getsockname(listener_, reinterpret_cast<sockaddr*>(&address), &length) != 0) {
            ::close(listener_);
            throw std::runtime_error("cannot listen on 127.0.0.1");
        }
        port_ = ntohs(address.sin_port);
        acceptor_ = std::thread([this] { accept_loop(); });
    }

    ~LocalHttpServer() {
        stopping_ = true;
        acceptor_.join();
        std::vector<std::thread> workers;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            workers.swap(workers_);
        }
        for (auto& worker : workers) worker.join();
        ::close(listener_);
    }

    LocalHttpServer(const LocalHttpServer&) = delete;
    LocalHttpServer& operator=(const LocalHttpServer&) = delete;

    int port() const { return port_; }

    // "http://127.0.0.1:PORT" + path_and_query; `userinfo` (as "user:token@")
    // goes before the host.
    std::string url(const std::string& path_and_query = "/", const std::string& userinfo = "",
                     const std::string& scheme = "http") const {
        return scheme + "://" + userinfo + "127.0.0.1:" + std::to_string(port_) + path_and_query;
    }

    void respond_with(Handler handler) {
        std::lock_guard<std::mutex> lock(mutex_);
        handler_ = std::move(handler);
    }

    std::vector<Request> requests() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return requests_;
    }

    int connections() const { return connections_; }

private:
    void accept_loop() {
        while (!stopping_) {
            pollfd ready{listener_, POLLIN, 0};
            if (::poll(&ready, 1, 20) <= 0) continue;
            const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
            if (client < 0) continue;
            ++connections_;
            std::lock_guard<std::mutex> lock(mutex_);
            workers_.emplace_back([this, client] { serve(client); });
        }
    }

    // Reads until the request is complete, the peer goes away, or the server stops.
    bool read_request(int client, Request& request) {
        std::string received;
        std::size_t header_end = std::string::npos;
        std::size_t wanted = 0;
        while (!stopping_) {
            if (header_end != std::string::npos && received.size() >= wanted) break;
            // A peer that does not open with a method (a TLS ClientHello) gets its answer at once.
            if (!received.empty() && !std::isupper(static_cast<unsigned char>(received[0]))) return true;
            pollfd ready{client, POLLIN, 0};
            if (::poll(&ready, 1, 20) <= 0) continue;
            char buffer[4096];
            const ssize_t n = ::recv(client, buffer, sizeof buffer, 0);
            if (n <= 0) return false;
            received.append(buffer, static_cast<std::size_t>(n));
            if (header_end == std::string::npos && (header_end = received.find("\r\n\r\n")) != std::string::npos) {
                parse_head(received.substr(0, header_end), request);
                const std::string length = request.header("content-length");
                wanted = header_end + 4 + (length.empty() ? 0 : std::stoul(length));
            }
        }
        if (stopping_) return false;
        request.body = received.substr(header_end + 4, wanted - header_end - 4);
        return true;
    }

    static void parse_head(const std::string& head, Request& request) {
        std::size_t line_end = head.find("\r\n");
        const std::string first = head.substr(0, line_end);
        const std::size_t space = first.find(' ');
        request.method = first.substr(0, space);
        request.target = first.substr(space + 1, first.rfind(' ') - space - 1);
        while (line_end != std::string::npos) {
            const std::size_t start = line_end + 2;
            line_end = head.find("\r\n", start);
            const std::string line = head.substr(start, line_end == std::string::npos ? std::string::npos
                                                                                      : line_end - start);
            const std::size_t colon = line.find(':');
            if (colon == std::string::npos) continue;
            std::string name = line.substr(0, colon);
            std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
            request.headers[name] = line.substr(line.find_first_not_of(' ', colon + 1));
        }
    }

    void serve(int client) {
        Request request;
        if (read_request(client, request)) {
            Reply reply;
            {
                std::lock_guard<std::mutex> lock(mutex_);
                requests_.push_back(request);
                reply = handler_(request);
            }
            std::size_t sent = 0;
            while (sent < reply.bytes.size()) {
                const ssize_t n = ::send(client, reply.bytes.data() + sent, reply.bytes.size() - sent, MSG_NOSIGNAL);
                if (n <= 0) break;
                sent += static_cast<std::size_t>(n);
            }
            while (reply.hold_open && !stopping_) {
                pollfd ready{client, POLLIN, 0};
                if (::poll(&ready, 1, 20) > 0) {
                    char sink[512];
                    if (::recv(client, sink, sizeof sink, 0) <= 0) break;  // the client gave up
                }
            }
        }
        ::close(client);
    }

    Handler handler_;
    int listener_ = -1;
    int port_ = 0;
    std::atomic<bool> stopping_{false};
    std::atomic<int> connections_{0};
    std::thread acceptor_;
    mutable std::mutex mutex_;
    std::vector<std::thread> workers_;
    std::vector<Request> requests_;
};

// A loopback port nothing listens on: bound, then released.
inline int unused_port() {
    const int probe = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    ::bind(probe, reinterpret_cast<sockaddr*>(&address), sizeof address);
    ::getsockname(probe, reinterpret_cast<sockaddr*>(&address), &length);
    ::close(probe);
    return ntohs(address.sin_port);
}

// Milliseconds since `start`.
inline double elapsed_ms(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace net_test
