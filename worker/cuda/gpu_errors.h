// Errors of the CUDA perft code, as plain C++ (callers need no CUDA headers).
#pragma once

#include <stdexcept>
#include <string>

namespace pgmate::gpu {

// A CUDA error after which the process's CUDA context is unusable (illegal address, launch
// failure, hardware stack error, ...): every later CUDA call in the process fails, LibTorch's
// included. The only recovery is a new process.
class DeviceFault : public std::runtime_error {
 public:
  explicit DeviceFault(const std::string& what) : std::runtime_error(what) {}
};

// Thrown when a perft's cancel hook answered true (between launches or while one ran).
class PerftCancelled : public std::runtime_error {
 public:
  PerftCancelled() : std::runtime_error("perft cancelled") {}
};

// True for the cudaError_t codes that leave the context dead (see DeviceFault).
bool is_context_fatal(int cuda_error);

// Throws for a cudaError_t other than cudaSuccess: DeviceFault when is_context_fatal,
// else std::runtime_error. The message names `what` and the CUDA error.
void check_cuda(int cuda_error, const char* what);

}  // namespace pgmate::gpu
