// A network read from a safetensors file (the one pgmate ships, or any pgmate wrote), for the
// commands that play without a database (pgmate uci, pgmate play), and a pgmate-worker of
// the command's own to run it when no worker is named.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "link/worker_client.h"
#include "link/protocol.h"

namespace pgmate::cli {

struct NetworkFile {
  std::string path;
  std::string weights;       // the file's bytes
  std::string config;        // the pgmate configuration in its metadata (JSON)
  worker::NetworkKey key;    // database 0, id 1, the SHA-256 of the weights (as an unstored network)
};

// Reads and checks the file (a safetensors file with pgmate's configuration); UsageError
// naming the file when it is not one.
NetworkFile read_network_file(const std::string& path);

// The network pgmate ships, where it is found: $PGMATE_NETWORK, then networks/ of the source
// tree the program was built in (build/bin/pgmate -> networks/), then the PostgreSQL share
// folder make install put it in. "" when there is none.
std::string shipped_network_path();

// A pgmate-worker started for this command on a socket of its own (in a temporary folder),
// on the CPU unless a GPU is found, stopped with the command. The program is found beside
// this one, then in PostgreSQL's bin folder, then on PATH.
class PrivateWorker {
 public:
  PrivateWorker();
  ~PrivateWorker();
  PrivateWorker(const PrivateWorker&) = delete;
  PrivateWorker& operator=(const PrivateWorker&) = delete;
  const std::string& address() const { return socket_; }

 private:
  std::string dir_, socket_;
  pid_t pid_ = -1;
};

}  // namespace pgmate::cli
