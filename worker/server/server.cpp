#include "worker/server/server.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

#include "common/json.h"
#include "link/socket_util.h"

namespace pgmate::worker {

using protocol::Bytes;
using protocol::ErrorCode;
using protocol::FrameHeader;
using protocol::MessageType;
using protocol::ProtocolError;

namespace {

constexpr std::size_t kReadChunk = 64 * 1024;
constexpr std::size_t kMaxReadPerWakeup = 4u << 20;
constexpr std::size_t kOutputHighWater = 32u << 20;  // stop reading a client that does not read its replies
constexpr auto kLinger = std::chrono::milliseconds(1000);
constexpr auto kPollTick = 100;  // ms
constexpr std::uint32_t kMaxHelloPayload = 64 * 1024;

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

[[noreturn]] void fail_errno(const std::string& what, int err) {
  throw std::runtime_error(what + ": " + errno_text(err));
}

}  // namespace

struct Server::Conn {
  std::uint64_t id = 0;
  UniqueFd fd;
  bool tcp = false;
  bool authenticated = false;
  Bytes in;
  std::size_t in_start = 0;
  Bytes out;
  std::size_t out_start = 0;
  int inflight = 0;
  bool closing = false;     // no more requests; close once the output is flushed
  bool write_shut = false;  // output shut down; waiting for the peer's EOF (or the linger time)
  bool dead = false;        // close at the end of this loop iteration
  Clock::time_point created;
  Clock::time_point linger_until;
  std::shared_ptr<std::atomic<bool>> cancelled = std::make_shared<std::atomic<bool>>(false);

  std::size_t pending_output() const { return out.size() - out_start; }
};

// ---- setup ----

Server::Server(ServerConfig config, std::unique_ptr<EvalBackend> backend, std::unique_ptr<TrainBackend> train_backend)
    : config_(std::move(config)) {
  if (config_.socket_path.empty()) throw std::runtime_error("pgmate-worker needs a Unix socket path");
  if (!config_.tcp.empty() && config_.token.empty())
    throw std::runtime_error("TCP needs a token (every TCP client must send it in HELLO)");
  if (config_.threads <= 0) config_.threads = int(std::max(1u, std::thread::hardware_concurrency()));
  if (config_.max_inflight_per_connection < 1) config_.max_inflight_per_connection = 1;
  try {
    // Validate the address before creating anything.
    (void)parse_address(config_.socket_path);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(e.what());
  }
  BatcherConfig batcher_config = config_.batcher;
  batcher_config.on_device_lost = [this](const std::string& what) { on_device_lost(what); };
  batcher_config.all_clients_waiting = [this] { return idle_connections_.load() == 0; };
  batcher_ = std::make_unique<Batcher>(std::move(backend), batcher_config);
  pool_ = std::make_unique<ThreadPool>(config_.threads);
  control_ = std::make_unique<ThreadPool>(1);
  perft_ = std::make_unique<PerftRunner>(*pool_, config_.gpu_allowed, &stopping_,
                                         [this](const std::string& what) { on_device_lost(what); });
  training_ = std::make_unique<TrainSessions>(
      std::move(train_backend), config_.max_train_sessions, &stopping_,
      [this](const std::string& what) { on_device_lost(what); }, [this](const std::string& line) { log(line); });
  try {
    wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd_ < 0) fail_errno("eventfd", errno);
    setup_unix();
    if (!config_.tcp.empty()) setup_tcp();
  } catch (...) {
    release_resources();
    if (wake_fd_ >= 0) close(wake_fd_);
    wake_fd_ = -1;
    throw;
  }
}

Server::~Server() {
  request_stop();
  if (thread_.joinable()) thread_.join();
  release_resources();
  // Closed last: request_stop() may be called until the server is destroyed.
  if (wake_fd_ >= 0) close(wake_fd_);
}

void Server::setup_unix() {
  const std::string& path = config_.socket_path;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);

  struct stat st;
  if (lstat(path.c_str(), &st) == 0) {
    if (!S_ISSOCK(st.st_mode))
      throw std::runtime_error(path + " exists and is not a socket; refusing to replace it");
    // Is somebody serving it? A refused connection means a stale file left by a worker
    // that died; anything else means the socket is alive (or not ours to judge).
    UniqueFd probe(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!probe) fail_errno("socket", errno);
    if (connect(probe.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 || errno == EAGAIN ||
        errno == EINPROGRESS)
      throw std::runtime_error("another pgmate-worker is already serving " + path);
    const int err = errno;
    if (err != ECONNREFUSED && err != ENOENT) fail_errno("cannot check the existing socket " + path, err);
    if (unlink(path.c_str()) != 0 && errno != ENOENT) fail_errno("cannot remove the stale socket " + path, errno);
    log("removed stale socket file " + path);
  }

  unix_fd_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (unix_fd_ < 0) fail_errno("socket", errno);
  // The socket file is created with mode 0600 (owner only); the umask covers the moment
  // between bind() and chmod().
  const mode_t old_mask = umask(0177);
  const int rc = bind(unix_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  const int bind_err = errno;
  umask(old_mask);
  if (rc != 0) fail_errno("cannot bind " + path, bind_err);
  if (chmod(path.c_str(), 0600) != 0) {
    const int err = errno;
    unlink(path.c_str());
    fail_errno("cannot chmod " + path, err);
  }
  if (lstat(path.c_str(), &st) == 0) {
    socket_dev_ = std::uint64_t(st.st_dev);
    socket_ino_ = std::uint64_t(st.st_ino);
  }
  if (listen(unix_fd_, 1024) != 0) {
    const int err = errno;
    unlink(path.c_str());
    socket_ino_ = 0;
    fail_errno("cannot listen on " + path, err);
  }
}

void Server::setup_tcp() {
  Address a;
  try {
    a = parse_host_port(config_.tcp);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(e.what());
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  const std::string port = std::to_string(a.port);
  if (int rc = getaddrinfo(a.host.c_str(), port.c_str(), &hints, &res); rc != 0)
    throw std::runtime_error("cannot resolve TCP address " + a.display() + ": " + gai_strerror(rc));
  int last_err = 0;
  for (addrinfo* ai = res; ai; ai = ai->ai_next) {
    UniqueFd fd(socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol));
    if (!fd) {
      last_err = errno;
      continue;
    }
    const int one = 1;
    setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd.get(), 1024) != 0) {
      last_err = errno;
      continue;
    }
    sockaddr_storage bound{};
    socklen_t len = sizeof bound;
    if (getsockname(fd.get(), reinterpret_cast<sockaddr*>(&bound), &len) == 0) {
      if (bound.ss_family == AF_INET)
        a.port = ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
      else if (bound.ss_family == AF_INET6)
        a.port = ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
    }
    tcp_fd_ = fd.release();
    break;
  }
  freeaddrinfo(res);
  if (tcp_fd_ < 0) fail_errno("cannot listen on TCP " + a.display(), last_err ? last_err : EADDRNOTAVAIL);
  tcp_port_ = a.port;
  tcp_display_ = a.display();
}

// Closes the listening sockets and removes the socket file, but only if it is still the
// one this server created (a newer worker may have replaced it).
void Server::close_listeners() {
  if (unix_fd_ >= 0) {
    close(unix_fd_);
    unix_fd_ = -1;
  }
  if (tcp_fd_ >= 0) {
    close(tcp_fd_);
    tcp_fd_ = -1;
  }
  struct stat st;
  if (socket_ino_ != 0 && lstat(config_.socket_path.c_str(), &st) == 0 && std::uint64_t(st.st_dev) == socket_dev_ &&
      std::uint64_t(st.st_ino) == socket_ino_)
    unlink(config_.socket_path.c_str());
  socket_ino_ = 0;
}

void Server::release_resources() {
  if (released_) return;
  released_ = true;
  stopping_ = true;
  if (batcher_) batcher_->stop();
  if (pool_) pool_->stop();
  if (control_) control_->stop();
  if (training_) training_->stop();
  close_listeners();
  conns_.clear();
  connections_ = 0;
}

void Server::log(const std::string& line) const {
  if (config_.log) config_.log(line);
}

// ---- control ----

void Server::start() {
  if (thread_.joinable() || ran_) throw std::logic_error("Server::start: already started");
  thread_ = std::thread([this] { run(); });
}

void Server::request_stop(int signal) {
  if (signal != 0) stop_signal_.store(signal);
  stop_requested_.store(true);
  wake();
}

// A dead CUDA context fails every later GPU call, perft's and the network's alike: stop
// serving, so that the process exits and its supervisor starts a fresh one.
void Server::on_device_lost(const std::string& what) {
  if (device_lost_.exchange(true)) return;
  log("the GPU failed for good (" + what + "): stopping, so that a fresh worker can use it");
  request_stop();
}

void Server::stop() {
  request_stop();
  if (thread_.joinable()) thread_.join();
}

void Server::wake() {
  const int fd = wake_fd_;
  if (fd < 0) return;
  const std::uint64_t one = 1;
  ssize_t rc = write(fd, &one, sizeof one);
  (void)rc;  // EAGAIN: the counter is already non-zero, the loop wakes anyway
}

void Server::post(std::uint64_t conn, Bytes frame, bool counted) {
  {
    std::lock_guard lock(completions_mutex_);
    completions_.push_back(Completion{conn, std::move(frame), counted});
  }
  wake();
}

void Server::post_error(std::uint64_t conn, std::uint32_t request_id, ErrorCode code, const std::string& message) {
  post(conn, protocol::encode_frame(request_id, protocol::ErrorReply{code, message}), true);
}

// ---- the loop ----

void Server::run() {
  if (ran_.exchange(true)) throw std::logic_error("Server::run: already ran");
  {
    std::string line = "serving on " + config_.socket_path;
    if (tcp_fd_ >= 0) line += " and " + tcp_display_ + " (token required)";
    line += "; device " + batcher_->device() + ", max batch " + std::to_string(config_.batcher.max_batch) +
            ", deadline " + std::to_string(config_.batcher.deadline.count()) + " us, " +
            std::to_string(config_.threads) + " perft threads, GPU perft: " +
            (perft_->gpu_available() ? std::string("yes") : "no (" + perft_->gpu_info() + ")") +
            ", training: " + (training_->available() ? training_->device() : std::string("no"));
    log(line);
  }

  std::vector<pollfd> fds;
  std::vector<Conn*> polled;
  while (!stop_requested_.load()) {
    const auto now = Clock::now();
    fds.clear();
    polled.clear();
    fds.push_back(pollfd{wake_fd_, POLLIN, 0});
    const bool accepting = now >= accept_paused_until_;
    const std::size_t unix_index = fds.size();
    if (accepting) fds.push_back(pollfd{unix_fd_, POLLIN, 0});
    const std::size_t tcp_index = fds.size();
    if (accepting && tcp_fd_ >= 0) fds.push_back(pollfd{tcp_fd_, POLLIN, 0});
    const std::size_t first_conn = fds.size();
    for (auto& [id, c] : conns_) {
      short events = 0;
      if (c->write_shut) {
        events = POLLIN;
      } else {
        if (!c->closing && c->inflight < config_.max_inflight_per_connection &&
            c->pending_output() < kOutputHighWater)
          events |= POLLIN;
        if (c->pending_output()) events |= POLLOUT;
      }
      fds.push_back(pollfd{c->fd.get(), events, 0});
      polled.push_back(c.get());
    }

    const int n = poll(fds.data(), nfds_t(fds.size()), kPollTick);
    if (n < 0 && errno != EINTR) {
      log(std::string("poll failed: ") + errno_text(errno));
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (fds[0].revents & POLLIN) {
      std::uint64_t v;
      ssize_t rc = read(wake_fd_, &v, sizeof v);
      (void)rc;
    }
    if (stop_requested_.load()) break;
    drain_completions();
    if (accepting && (fds[unix_index].revents & POLLIN)) accept_all(unix_fd_, false);
    if (accepting && tcp_fd_ >= 0 && (fds[tcp_index].revents & POLLIN)) accept_all(tcp_fd_, true);

    for (std::size_t i = 0; i < polled.size(); ++i) {
      Conn& c = *polled[i];
      const short re = fds[first_conn + i].revents;
      if (c.dead || re == 0) continue;
      if (re & POLLNVAL) {
        c.dead = true;
        continue;
      }
      if (re & (POLLIN | POLLHUP | POLLERR)) handle_readable(c);
      if (!c.dead && (re & POLLOUT)) flush(c);
    }

    // Timers and closing connections.
    const auto later = Clock::now();
    std::vector<std::uint64_t> dead;
    for (auto& [id, cp] : conns_) {
      Conn& c = *cp;
      if (!c.dead && c.tcp && !c.authenticated && !c.closing && later - c.created > config_.hello_timeout)
        reply_error(c, 0, ErrorCode::kUnauthorized,
                    "no HELLO with the token within " + std::to_string(config_.hello_timeout.count()) + " ms", true);
      if (!c.dead && c.closing && !c.write_shut && c.pending_output() == 0) {
        shutdown(c.fd.get(), SHUT_WR);
        c.write_shut = true;
        c.linger_until = later + kLinger;
      }
      if (!c.dead && c.write_shut && later >= c.linger_until) c.dead = true;
      if (c.dead) dead.push_back(id);
    }
    for (auto id : dead) close_conn(id);
  }
  shutdown_sequence();
}

void Server::accept_all(int listen_fd, bool tcp) {
  for (;;) {
    const int fd = accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      const int err = errno;
      if (err == EAGAIN || err == EWOULDBLOCK) return;
      if (err == EINTR || err == ECONNABORTED || err == EPROTO) continue;
      if (err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM) {
        log("cannot accept connections: " + errno_text(err) + " (pausing 100 ms)");
        accept_paused_until_ = Clock::now() + std::chrono::milliseconds(100);
        return;
      }
      log("accept failed: " + errno_text(err));
      return;
    }
    UniqueFd owned(fd);
    if (int(conns_.size()) >= config_.max_connections) {
      // Best effort: tell the client why, then drop it.
      const Bytes frame = protocol::encode_frame(
          0, protocol::ErrorReply{ErrorCode::kBusy, "too many connections (" +
                                                         std::to_string(config_.max_connections) + ")"});
      ssize_t rc = send(fd, frame.data(), frame.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      (void)rc;
      continue;
    }
    if (tcp) {
      const int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    auto c = std::make_unique<Conn>();
    c->id = next_conn_id_++;
    c->fd = std::move(owned);
    c->tcp = tcp;
    c->authenticated = !tcp;  // the Unix socket's mode is the access control
    c->created = Clock::now();
    conns_.emplace(c->id, std::move(c));
    ++connections_;
    ++idle_connections_;
  }
}

void Server::handle_readable(Conn& c) {
  std::size_t total = 0;
  for (;;) {
    if (c.write_shut) {
      // Discard whatever the peer still sends until it closes.
      std::uint8_t sink[4096];
      const ssize_t n = recv(c.fd.get(), sink, sizeof sink, 0);
      if (n > 0) continue;
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
      c.dead = true;
      return;
    }
    if (total >= kMaxReadPerWakeup) break;
    const std::size_t old = c.in.size();
    c.in.resize(old + kReadChunk);
    const ssize_t n = recv(c.fd.get(), c.in.data() + old, kReadChunk, 0);
    c.in.resize(old + std::size_t(std::max<ssize_t>(n, 0)));
    if (n > 0) {
      total += std::size_t(n);
      if (std::size_t(n) < kReadChunk) break;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    // EOF or a connection error: the client is gone; abandon its work.
    c.dead = true;
    c.cancelled->store(true);
    return;
  }
  process_input(c);
}

void Server::process_input(Conn& c) {
  while (!c.closing && !c.dead && c.inflight < config_.max_inflight_per_connection) {
    const std::size_t avail = c.in.size() - c.in_start;
    if (avail < protocol::kHeaderSize) break;
    const std::span<const std::uint8_t> bytes(c.in.data() + c.in_start, avail);
    FrameHeader h;
    try {
      h = protocol::decode_header(bytes, config_.limits);
    } catch (const ProtocolError& e) {
      std::uint32_t rid = 0;
      if (std::memcmp(bytes.data(), protocol::kMagic, 4) == 0) std::memcpy(&rid, bytes.data() + 8, 4);
      reply_error(c, rid, ErrorCode::kBadFrame, e.what(), true);
      break;
    }
    // Before HELLO (TCP), only a small HELLO is buffered: an unauthenticated peer cannot
    // make the worker hold a large frame.
    if (!c.authenticated && (h.type != MessageType::kHello || h.payload_length > kMaxHelloPayload)) {
      reply_error(c, h.request_id, ErrorCode::kUnauthorized,
                  "this connection must start with HELLO carrying the token (required on TCP)", true);
      break;
    }
    const std::size_t frame = protocol::kHeaderSize + h.payload_length;
    if (avail < frame) {
      c.in.reserve(c.in_start + frame);
      break;
    }
    dispatch(c, h, bytes.subspan(protocol::kHeaderSize, h.payload_length));
    c.in_start += frame;
  }
  if (c.in_start == c.in.size()) {
    c.in.clear();
    c.in_start = 0;
  } else if (c.in_start >= (1u << 20) || c.in_start * 2 >= c.in.size()) {
    c.in.erase(c.in.begin(), c.in.begin() + std::ptrdiff_t(c.in_start));
    c.in_start = 0;
  }
}

void Server::dispatch(Conn& c, const FrameHeader& h, std::span<const std::uint8_t> payload) {
  using namespace protocol;
  const std::uint32_t rid = h.request_id;
  const std::uint64_t cid = c.id;
  ++requests_;

  if (!c.authenticated && h.type != MessageType::kHello)
    return reply_error(c, rid, ErrorCode::kUnauthorized,
                       "this connection must start with HELLO carrying the token (required on TCP)", true);

  auto fail = [this, cid, rid](ErrorCode code, const std::string& message) { post_error(cid, rid, code, message); };

  try {
    switch (h.type) {
      case MessageType::kHello: {
        Hello hello;
        try {
          hello = decode_payload<Hello>(payload);
        } catch (const ProtocolError& e) {
          return reply_error(c, rid, ErrorCode::kBadRequest, e.what(), !c.authenticated);
        }
        if (hello.version != kVersion)
          return reply_error(c, rid, ErrorCode::kBadRequest,
                             "client speaks protocol version " + std::to_string(hello.version) +
                                 ", this worker speaks version " + std::to_string(kVersion),
                             true);
        if (c.tcp && !constant_time_equal(hello.token, config_.token)) {
          log("refused a TCP client: wrong token");
          return reply_error(c, rid, ErrorCode::kUnauthorized, "wrong token", true);
        }
        c.authenticated = true;
        queue_frame(c, encode_frame(rid, HelloReply{kVersion, "pgmate-worker (protocol " + std::to_string(kVersion) +
                                                                  ", device " + batcher_->device() + ")"}));
        return;
      }
      case MessageType::kStatus: {
        const auto req = decode_payload<StatusRequest>(payload);
        queue_frame(c, encode_frame(rid, StatusReply{status_json(req.database)}));
        return;
      }
      case MessageType::kPerft: {
        const auto req = decode_payload<PerftRequest>(payload);
        start_request(c);
        perft_->submit(
            req.board, req.depth, req.device, c.cancelled,
            [this, cid, rid](std::uint64_t nodes) { post(cid, encode_frame(rid, PerftReply{nodes}), true); }, fail,
            cid);
        return;
      }
      case MessageType::kCheckersPerft: {
        const auto req = decode_payload<CheckersPerftRequest>(payload);
        start_request(c);
        perft_->submit_checkers(
            req.board, req.depth, req.rule, req.device, c.cancelled,
            [this, cid, rid](std::uint64_t nodes) { post(cid, encode_frame(rid, CheckersPerftReply{nodes}), true); },
            fail, cid);
        return;
      }
      case MessageType::kLegalMoves: {
        auto req = decode_payload<LegalMovesRequest>(payload);
        start_request(c);
        LegalJob job;
        job.boards = std::move(req.boards);
        job.cancelled = c.cancelled;
        job.done = [this, cid, rid](std::vector<std::vector<chess::Move>>&& moves) {
          LegalMovesReply reply;
          reply.moves = std::move(moves);
          post(cid, encode_frame(rid, reply), true);
        };
        job.fail = fail;
        batcher_->submit(std::move(job));
        return;
      }
      case MessageType::kEvaluate: {
        auto req = decode_payload<EvaluateRequest>(payload);
        start_request(c);
        EvalJob job;
        job.key = req.network;
        // Resolved now: the job keeps this network even if it is evicted before it runs.
        job.network = batcher_->find_network(req.network);
        job.inputs = std::move(req.inputs);
        job.repetitions = std::move(req.repetitions);
        job.cancelled = c.cancelled;
        job.done = [this, cid, rid, key = req.network](std::vector<EvalResult>&& results) {
          EvaluateReply reply;
          reply.network = key;
          reply.results = std::move(results);
          post(cid, encode_frame(rid, reply), true);
        };
        job.fail = fail;
        batcher_->submit(std::move(job));
        return;
      }
      case MessageType::kLoadNetwork: {
        auto req = std::make_shared<LoadNetworkRequest>(decode_payload<LoadNetworkRequest>(payload));
        start_request(c);
        const bool queued = control_->submit([this, req, cid, rid, fail] {
          if (stopping_) return fail(ErrorCode::kShuttingDown, "the worker is shutting down");
          const auto t0 = Clock::now();
          const std::string name = req->network.describe();
          std::shared_ptr<const LoadedNetwork> network;
          try {
            network = batcher_->load_network(req->network, req->config, req->weights);
          } catch (const std::exception& e) {
            log(name + " failed to load: " + e.what());
            return fail(ErrorCode::kBackend, "cannot load network " + std::to_string(req->network.id) + ": " + e.what());
          }
          const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
          const auto held = batcher_->networks().stats();
          log("holds " + name + " (" + std::to_string(req->weights.size()) + " bytes of weights, " + fixed(ms, 1) +
              " ms): " + network->config_json() + "; " + std::to_string(held.held) + " networks, " +
              std::to_string(held.bytes >> 20) + " MiB held");
          post(cid, encode_frame(rid, LoadNetworkReply{}), true);
        });
        if (!queued) fail(ErrorCode::kShuttingDown, "the worker is shutting down");
        return;
      }
      case MessageType::kInitWeights: {
        auto req = std::make_shared<InitWeightsRequest>(decode_payload<InitWeightsRequest>(payload));
        start_request(c);
        const bool queued = control_->submit([this, req, cid, rid, fail] {
          if (stopping_) return fail(ErrorCode::kShuttingDown, "the worker is shutting down");
          std::string weights;
          try {
            weights = batcher_->init_weights(req->config, req->seed);
          } catch (const std::exception& e) {
            return fail(ErrorCode::kBackend, std::string("cannot initialise weights: ") + e.what());
          }
          if (weights.size() > config_.limits.max_payload_for(MessageType::kInitWeightsReply) - 4)
            return fail(ErrorCode::kBackend, "the initialised weights (" + std::to_string(weights.size()) +
                                                 " bytes) exceed the frame limit");
          post(cid, encode_frame(rid, InitWeightsReply{std::move(weights)}), true);
        });
        if (!queued) fail(ErrorCode::kShuttingDown, "the worker is shutting down");
        return;
      }
      case MessageType::kTrainStart: {
        auto req = decode_payload<TrainStartRequest>(payload);
        start_request(c);
        training_->start(
            cid, std::move(req), c.cancelled,
            [this, cid, rid](TrainStartReply&& reply) { post(cid, encode_frame(rid, reply), true); }, fail);
        return;
      }
      case MessageType::kTrainStep: {
        auto req = decode_payload<TrainStepRequest>(payload);
        start_request(c);
        training_->step(
            cid, std::move(req), c.cancelled,
            [this, cid, rid](const TrainMetrics& m) { post(cid, encode_frame(rid, TrainStepReply{m}), true); }, fail);
        return;
      }
      case MessageType::kTrainSave: {
        const auto req = decode_payload<TrainSaveRequest>(payload);
        start_request(c);
        training_->save(
            cid, req, config_.limits.max_payload_for(MessageType::kTrainSaveReply), c.cancelled,
            [this, cid, rid](TrainSaveReply&& reply) { post(cid, encode_frame(rid, reply), true); }, fail);
        return;
      }
      default:
        return reply_error(c, rid, ErrorCode::kBadRequest,
                           "unexpected " + type_name(h.type) + " from a client (only requests are accepted)", false);
    }
  } catch (const ProtocolError& e) {
    reply_error(c, rid, ErrorCode::kBadRequest, e.what(), false);
  } catch (const std::exception& e) {
    reply_error(c, rid, ErrorCode::kInternal, e.what(), false);
  }
}

void Server::queue_frame(Conn& c, Bytes frame) {
  if (c.dead || c.write_shut) return;
  if (c.pending_output() == 0) {
    c.out = std::move(frame);
    c.out_start = 0;
  } else {
    c.out.insert(c.out.end(), frame.begin(), frame.end());
  }
  flush(c);
}

void Server::reply_error(Conn& c, std::uint32_t request_id, ErrorCode code, const std::string& message,
                         bool close_after) {
  queue_frame(c, protocol::encode_frame(request_id, protocol::ErrorReply{code, message}));
  if (close_after) {
    c.closing = true;
    c.cancelled->store(true);
  }
}

void Server::flush(Conn& c) {
  while (c.out_start < c.out.size()) {
    const ssize_t n = send(c.fd.get(), c.out.data() + c.out_start, c.out.size() - c.out_start, MSG_NOSIGNAL);
    if (n > 0) {
      c.out_start += std::size_t(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    c.dead = true;
    c.cancelled->store(true);
    return;
  }
  if (c.out_start == c.out.size()) {
    c.out.clear();
    c.out_start = 0;
  } else if (c.out_start >= (4u << 20)) {
    c.out.erase(c.out.begin(), c.out.begin() + std::ptrdiff_t(c.out_start));
    c.out_start = 0;
  }
}

void Server::drain_completions() {
  std::vector<Completion> done;
  {
    std::lock_guard lock(completions_mutex_);
    done.swap(completions_);
  }
  std::vector<Conn*> resumed;
  for (auto& d : done) {
    auto it = conns_.find(d.conn);
    if (it == conns_.end()) continue;  // the client went away meanwhile
    Conn& c = *it->second;
    if (d.counted && c.inflight > 0) {
      if (c.inflight == config_.max_inflight_per_connection) resumed.push_back(&c);
      if (--c.inflight == 0) ++idle_connections_;
    }
    queue_frame(c, std::move(d.frame));
  }
  // Connections that hit the in-flight limit may have complete requests buffered.
  for (Conn* c : resumed) process_input(*c);
}

void Server::start_request(Conn& c) {
  if (c.inflight++ == 0) --idle_connections_;
}

void Server::close_conn(std::uint64_t id) {
  auto it = conns_.find(id);
  if (it == conns_.end()) return;
  it->second->cancelled->store(true);
  if (it->second->inflight == 0) --idle_connections_;
  conns_.erase(it);
  --connections_;
  training_->drop_connection(id);  // its training sessions go with it
}

void Server::shutdown_sequence() {
  const int sig = stop_signal_.load();
  const std::string why = sig == SIGTERM ? " on SIGTERM" : sig == SIGINT ? " on SIGINT" : sig ? " on signal " + std::to_string(sig) : "";
  log("stopping" + why + ": " + std::to_string(conns_.size()) + " clients connected, " +
      std::to_string(batcher_->stats().eval_queue_depth + batcher_->stats().legal_queue_depth) +
      " positions queued");
  // No new clients: close the listeners and remove the socket file first.
  close_listeners();

  // Fail what is queued (running perfts see stopping_ and give up), let the batch in
  // progress finish, then deliver every reply we still can.
  stopping_ = true;
  batcher_->stop();
  pool_->stop();
  control_->stop();
  training_->stop();
  drain_completions();
  const auto deadline = Clock::now() + config_.shutdown_flush;
  for (;;) {
    std::vector<pollfd> fds;
    std::vector<Conn*> who;
    for (auto& [id, c] : conns_)
      if (!c->dead && c->pending_output()) {
        fds.push_back(pollfd{c->fd.get(), POLLOUT, 0});
        who.push_back(c.get());
      }
    const auto now = Clock::now();
    if (fds.empty() || now >= deadline) break;
    const int ms = int(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count()) + 1;
    if (poll(fds.data(), nfds_t(fds.size()), std::min(ms, kPollTick)) < 0 && errno != EINTR) break;
    for (std::size_t i = 0; i < fds.size(); ++i)
      if (fds[i].revents & (POLLOUT | POLLERR | POLLHUP)) flush(*who[i]);
  }
  const double up = std::chrono::duration<double>(Clock::now() - started_).count();
  const auto stats = batcher_->stats();
  log("stopped after " + fixed(up, 1) + " s: " + std::to_string(requests_.load()) + " requests, " +
      std::to_string(stats.eval_batches) + " evaluation batches (" + std::to_string(stats.eval_positions) +
      " positions), " + std::to_string(perft_->requests()) + " perft requests");
  release_resources();
}

std::string Server::status_json(std::uint32_t database) const {
  const auto s = batcher_->stats();
  const auto held = batcher_->networks().stats();
  const double up = std::chrono::duration<double>(Clock::now() - started_).count();
  std::string j = "{";
  auto field = [&](const char* name, const std::string& value) {
    if (j.size() > 1) j += ',';
    j += '"';
    j += name;
    j += "\":";
    j += value;
  };
  field("protocol_version", std::to_string(protocol::kVersion));
  field("device", json_string(batcher_->device()));
  field("input_encoding", json_string(batcher_->input_form() == InputForm::kBoards ? "device" : "host"));
  field("networks", batcher_->networks().json(database));
  field("networks_held", std::to_string(held.held));
  field("network_memory_bytes", std::to_string(held.bytes));
  field("network_memory_budget", std::to_string(batcher_->networks().budget_bytes()));
  field("network_loads", std::to_string(held.loads));
  field("network_evictions", std::to_string(held.evictions));
  field("uptime_s", fixed(up, 3));
  field("connected_clients", std::to_string(connections_.load()));
  field("requests", std::to_string(requests_.load()));
  field("queue_depth", std::to_string(s.eval_queue_depth + s.legal_queue_depth));
  field("eval_queue_depth", std::to_string(s.eval_queue_depth));
  field("legal_moves_queue_depth", std::to_string(s.legal_queue_depth));
  field("eval_requests", std::to_string(s.eval_requests));
  field("eval_failures", std::to_string(s.eval_failures));
  field("batches_run", std::to_string(s.eval_batches));
  field("positions_evaluated", std::to_string(s.eval_positions));
  field("mean_batch_size", fixed(s.mean_batch_size, 2));
  field("largest_batch", std::to_string(s.largest_batch));
  field("positions_per_s", fixed(s.positions_per_s, 1));
  field("legal_moves_requests", std::to_string(s.legal_requests));
  field("legal_moves_batches", std::to_string(s.legal_batches));
  field("legal_moves_positions", std::to_string(s.legal_positions));
  field("perft_requests", std::to_string(perft_->requests()));
  field("perft_running", std::to_string(perft_->running()));
  field("perft_gpu", perft_->gpu_available() ? "true" : "false");
  field("perft_gpu_info", json_string(perft_->gpu_info()));
  field("max_batch", std::to_string(config_.batcher.max_batch));
  field("deadline_us", std::to_string(config_.batcher.deadline.count()));
  field("threads", std::to_string(config_.threads));
  field("training", training_->available() ? json_string(training_->device()) : "null");
  field("training_sessions", std::to_string(training_->sessions()));
  field("training_steps", std::to_string(training_->steps()));
  field("socket", json_string(config_.socket_path));
  field("tcp", tcp_port_ ? json_string(tcp_display_) : "null");
  j += '}';
  return j;
}

}  // namespace pgmate::worker
