// PGMATE_HD marks code that is compiled both for the host and inside CUDA kernels.
// Outside nvcc it expands to nothing, so core/ stays plain C++20.
#pragma once

#if defined(__CUDACC__)
#define PGMATE_HD __host__ __device__
#define PGMATE_FORCEINLINE __forceinline__
#else
#define PGMATE_HD
#define PGMATE_FORCEINLINE inline __attribute__((always_inline))
#endif

// Asks nvcc to unroll the next loop in device code (the host pass and host compilers
// decide on their own and would warn about the pragma).
#if defined(__CUDA_ARCH__)
#define PGMATE_UNROLL _Pragma("unroll")
#else
#define PGMATE_UNROLL
#endif
