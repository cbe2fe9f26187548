#include "tools/daemon/daemon_client.h"

#include <sys/socket.h>
#include <sys/time.h>

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <fmt/format.h>

#include "runtime/core/asio.h"

namespace tidemark {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;

void SetTimeouts(int fd, std::chrono::milliseconds timeout) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(timeout.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((timeout.count() % 1000) * 1000);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/// Runs the asynchronous operation `start` begins on `ioc` until it completes or `deadline`
/// passes; then closes `socket` and returns timed_out. (SO_RCVTIMEO / SO_SNDTIMEO alone do not
/// bound a synchronous asio read: asio takes their EAGAIN for "not ready yet" and polls without a
/// timeout, so a daemon that accepted but never answered hung `tidemark list` for ever.)
template <class Socket, class Start>
beast::error_code RunUntil(asio::io_context& ioc, Socket& socket,
                           std::chrono::steady_clock::time_point deadline, Start start) {
  beast::error_code result;
  bool done = false;
  start([&](beast::error_code ec, size_t) {
    result = ec;
    done = true;
  });
  ioc.restart();
  ioc.run_until(deadline);
  if (!done) {
    beast::error_code ignored;
    socket.close(ignored);
    ioc.restart();
    ioc.run();  // the aborted operation's handler
    return asio::error::timed_out;
  }
  return result;
}

template <class Socket>
DaemonClient::Response Exchange(asio::io_context& ioc, Socket& socket,
                                std::chrono::milliseconds timeout, const std::string& host,
                                const DaemonEndpoint& endpoint, const std::string& method,
                                const std::string& target, const std::string& body,
                                const std::string& content_type) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  http::request<http::string_body> req{http::string_to_verb(method), target, 11};
  req.set(http::field::host, host);
  req.set(http::field::user_agent, "tidemark");
  if (!endpoint.token.empty()) {
    req.set(http::field::authorization, "Bearer " + endpoint.token);
  }
  if (!body.empty() || method == "POST") {
    req.set(http::field::content_type, content_type);
    req.body() = body;
  }
  req.keep_alive(false);
  req.prepare_payload();
  const beast::error_code write_ec = RunUntil(
      ioc, socket, deadline, [&](auto handler) { http::async_write(socket, req, handler); });
  // A failed send may still have an answer waiting: the daemon refuses a body over its limit with
  // 413 and closes before reading the rest, which breaks our pipe. Read it before giving up.
  beast::error_code ec;
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(256u << 20);
  if (socket.is_open()) {
    ec = RunUntil(ioc, socket, deadline,
                  [&](auto handler) { http::async_read(socket, buffer, parser, handler); });
  } else {
    ec = write_ec;
  }
  if (ec && write_ec) {
    throw DaemonUnreachable(fmt::format("cannot send to the daemon at {}: {}", endpoint.ToString(),
                                        write_ec.message()));
  }
  if (ec) {
    throw DaemonUnreachable(
        fmt::format("no answer from the daemon at {}: {}", endpoint.ToString(), ec.message()));
  }
  auto res = parser.release();
  return {static_cast<int>(res.result_int()), std::move(res.body())};
}

}  // namespace

std::string DaemonEndpoint::ToString() const {
  return url.empty() ? "unix:" + socket_path : url;
}

DaemonClient::Response DaemonClient::Request(const std::string& method, const std::string& target,
                                             const std::string& body,
                                             const std::string& content_type) {
  asio::io_context ioc;
  beast::error_code ec;
  if (endpoint_.url.empty()) {
    asio::local::stream_protocol::socket socket(ioc);
    socket.open(asio::local::stream_protocol(), ec);
    if (!ec) {
      SetTimeouts(socket.native_handle(), timeout_);
      socket.connect(asio::local::stream_protocol::endpoint(endpoint_.socket_path), ec);
    }
    if (ec) {
      throw DaemonUnreachable(fmt::format("cannot connect to the daemon at {}: {}",
                                          endpoint_.ToString(), ec.message()));
    }
    return Exchange(ioc, socket, timeout_, "localhost", endpoint_, method, target, body,
                    content_type);
  }
  std::string rest = endpoint_.url;
  if (rest.rfind("http://", 0) != 0) {
    throw InvalidArgument(
        fmt::format("unsupported URL '{}': expected http://HOST:PORT", endpoint_.url));
  }
  rest = rest.substr(7);
  while (!rest.empty() && rest.back() == '/') {
    rest.pop_back();
  }
  const size_t colon = rest.rfind(':');
  if (colon == std::string::npos || colon + 1 == rest.size()) {
    throw InvalidArgument(fmt::format("URL '{}' needs a port: http://HOST:PORT", endpoint_.url));
  }
  std::string host = rest.substr(0, colon);
  const std::string port = rest.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  asio::ip::tcp::resolver resolver(ioc);
  auto results = resolver.resolve(host, port, ec);
  if (ec) {
    throw DaemonUnreachable(fmt::format("cannot resolve {}: {}", endpoint_.url, ec.message()));
  }
  asio::ip::tcp::socket socket(ioc);
  for (const auto& r : results) {
    socket.close(ec);
    socket.open(r.endpoint().protocol(), ec);
    if (ec) {
      continue;
    }
    SetTimeouts(socket.native_handle(), timeout_);
    socket.connect(r.endpoint(), ec);
    if (!ec) {
      break;
    }
  }
  if (ec || !socket.is_open()) {
    throw DaemonUnreachable(
        fmt::format("cannot connect to the daemon at {}: {}", endpoint_.url, ec.message()));
  }
  return Exchange(ioc, socket, timeout_, host + ":" + port, endpoint_, method, target, body,
                  content_type);
}

}  // namespace tidemark
