// Copy kernels: what a persistent grid of G blocks (one per SM) moves.
#include <stdint.h>
#ifndef UNR
#define UNR 4
#endif
// Copies vectors i, i + step, ... below `end`, UNR loads in flight per
// thread before their stores (streaming hints).
__device__ __forceinline__ void copy_strided(const uint4 *__restrict__ src,
                                             uint4 *__restrict__ dst,
                                             long long i, long long end,
                                             long long step) {
  for (; i + (UNR - 1) * step < end; i += UNR * step) {
    uint4 v[UNR];
#pragma unroll
    for (int u = 0; u < UNR; ++u)
      v[u] = __ldcs(src + i + u * step);
#pragma unroll
    for (int u = 0; u < UNR; ++u)
      __stcs(dst + i + u * step, v[u]);
  }
  for (; i < end; i += step)
    __stcs(dst + i, __ldcs(src + i));
}
// Grid-stride: the whole grid reads one contiguous window at a time.
extern "C" __global__ void __launch_bounds__(1024, 1)
    stride_copy(const uint4 *__restrict__ src, uint4 *__restrict__ dst,
                long long n) {
  long long step = (long long)blockDim.x * gridDim.x;
  copy_strided(src, dst, (long long)blockIdx.x * blockDim.x + threadIdx.x, n,
               step);
}
// Regions: block b copies its own contiguous part, in chunks of 1024 x UNR.
extern "C" __global__ void __launch_bounds__(1024, 1)
    region_copy(const uint4 *__restrict__ src, uint4 *__restrict__ dst,
                long long n) {
  long long per = (n + gridDim.x - 1) / gridDim.x;
  long long lo = blockIdx.x * per, hi = lo + per < n ? lo + per : n;
  copy_strided(src, dst, lo + threadIdx.x, hi, blockDim.x);
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
