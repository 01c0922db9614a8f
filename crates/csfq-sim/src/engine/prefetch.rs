//! A hint to the CPU to bring a value into its caches ahead of its use: the event loop
//! asks for the next event's data while it handles the current one, so the dependent
//! loads of a large run (an in-flight packet's slot, a port) overlap instead of waiting
//! in turn. It changes no result, only when memory is read.

/// Starts loading the cache line that holds the start of `value`; does nothing on
/// targets without the instruction.
#[inline(always)]
pub(super) fn prefetch<T>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: a prefetch reads nothing the program sees and cannot fault; the pointer
        // comes from a reference, so it is valid besides; SSE, which the instruction
        // needs, is part of every x86_64 CPU.
        unsafe { _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}
