#ifndef GG_DEV_FENCE_CUH
#define GG_DEV_FENCE_CUH
// Proxy fences: ordinary stores to shared memory (st.shared, stmatrix) are made by the
// generic proxy; TMA and wgmma read through the async proxy. A writing thread issues
// this fence before the barrier after which TMA stores or wgmma read that data.
namespace gg::dev {

static __device__ __forceinline__ void fence_proxy_async_shared_cta() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

}  // namespace gg::dev
#endif  // GG_DEV_FENCE_CUH
