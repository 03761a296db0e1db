// Copy kernels: what a persistent grid of G blocks (one per SM) moves.
#include <stdint.h>
#ifndef UNR
#define UNR 4
#endif
// Grid-stride: the whole grid reads one contiguous window at a time.
extern "C" __global__ void __launch_bounds__(1024, 1)
    stride_copy(const uint4 *__restrict__ src, uint4 *__restrict__ dst,
                long long n) {
  long long step = (long long)blockDim.x * gridDim.x;
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + (UNR - 1) * step < n; i += UNR * step) {
    uint4 v[UNR];
#pragma unroll
    for (int u = 0; u < UNR; ++u)
      v[u] = __ldcs(src + i + u * step);
#pragma unroll
    for (int u = 0; u < UNR; ++u)
      __stcs(dst + i + u * step, v[u]);
  }
  for (; i < n; i += step)
    __stcs(dst + i, __ldcs(src + i));
}
// Regions: block b copies its own contiguous part, in chunks of 1024 x UNR.
extern "C" __global__ void __launch_bounds__(1024, 1)
    region_copy(const uint4 *__restrict__ src, uint4 *__restrict__ dst,
                long long n) {
  long long per = (n + gridDim.x - 1) / gridDim.x;
  long long lo = blockIdx.x * per, hi = lo + per < n ? lo + per : n;
  long long i = lo + threadIdx.x;
  const long long step = blockDim.x;
  for (; i + (UNR - 1) * step < hi; i += UNR * step) {
    uint4 v[UNR];
#pragma unroll
    for (int u = 0; u < UNR; ++u)
      v[u] = __ldcs(src + i + u * step);
#pragma unroll
    for (int u = 0; u < UNR; ++u)
      __stcs(dst + i + u * step, v[u]);
  }
  for (; i < hi; i += step)
    __stcs(dst + i, __ldcs(src + i));
}
// One tile per block, many blocks: the non-persistent copy.
extern "C" __global__ void __launch_bounds__(256)
    tile_copy(const uint4 *__restrict__ src, uint4 *__restrict__ dst,
              long long n) {
  long long i = (long long)blockIdx.x * 256 * UNR + threadIdx.x;
  uint4 v[UNR];
#pragma unroll
  for (int u = 0; u < UNR; ++u)
    if (i + u * 256 < n)
      v[u] = __ldcs(src + i + u * 256);
#pragma unroll
  for (int u = 0; u < UNR; ++u)
    if (i + u * 256 < n)
      __stcs(dst + i + u * 256, v[u]);
}

#ifndef TT
#define TT 128
#endif
// The same with TT threads per block.
extern "C" __global__ void __launch_bounds__(TT)
    small_copy(const uint4 *__restrict__ src, uint4 *__restrict__ dst,
               long long n) {
  long long i = (long long)blockIdx.x * TT * UNR + threadIdx.x;
  uint4 v[UNR];
#pragma unroll
  for (int u = 0; u < UNR; ++u)
    if (i + u * TT < n)
      v[u] = src[i + u * TT];
#pragma unroll
  for (int u = 0; u < UNR; ++u)
    if (i + u * TT < n)
      dst[i + u * TT] = v[u];
}
