//! Long strings decoded outside V8's young generation.
//!
//! A string the codec decodes (`latin1Slice` / `ucs2Slice`) is a sequential
//! string on the V8 heap. From 8 KiB up that is what limits a pool moving
//! strings: the caller keeps its answers for a while, so they survive the
//! scavenges and are copied by every one of them. Echo of 64 KiB strings,
//! 256 in flight (`node --cpu-prof bench/payload-profile.mjs string 65536`,
//! 2026-12-04, Node 20.20): the host spent 61% of its time in the garbage
//! collector (76.8% of the young generation survived each scavenge), and
//! the same pool ran 2.7x faster with `--max-semi-space-size=64`.
//!
//! An external string keeps its characters in memory of its own; the heap
//! holds only a small header, so a scavenge does not copy the characters.
//! N-API creates one with `node_api_create_external_string_latin1` /
//! `_utf16`: experimental in Node 20.4 to 22, stable in N-API 10. This
//! addon is built for N-API 8, so it looks both up at run time and the JS
//! side falls back to the heap copy where they are missing (older Node
//! releases, other runtimes, other platforms).

use std::ffi::{c_void, CStr};
use std::sync::OnceLock;

use napi::sys;

/// The creating function: env, characters, length, finalizer, hint,
/// out value, out "copied" (the runtime copied the characters and already
/// ran the finalizer).
type Create<T> = unsafe extern "C" fn(
    sys::napi_env,
    *mut T,
    isize,
    Finalize,
    *mut c_void,
    *mut sys::napi_value,
    *mut bool,
) -> sys::napi_status;

/// `node_api_basic_finalize`: runs during garbage collection, calls no JS.
type Finalize = Option<unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_void)>;

struct Functions {
    // `char*` in C: the same ABI as a pointer to u8.
    latin1: Option<Create<u8>>,
    utf16: Option<Create<u16>>,
}

fn functions() -> &'static Functions {
    static FUNCTIONS: OnceLock<Functions> = OnceLock::new();
    FUNCTIONS.get_or_init(|| Functions {
        // SAFETY: both symbols, where the runtime exports them, have the
        // signature `Create` spells out (js_native_api.h, N-API 10).
        latin1: unsafe { lookup(c"node_api_create_external_string_latin1") },
        // SAFETY: as above.
        utf16: unsafe { lookup(c"node_api_create_external_string_utf16") },
    })
}

/// The runtime's own function `name`, if it exports one.
///
/// # Safety
/// `F` must be the function pointer type of the symbol `name`.
#[cfg(target_os = "linux")]
unsafe fn lookup<F: Copy>(name: &CStr) -> Option<F> {
    // SAFETY: dlsym with RTLD_DEFAULT searches the loaded objects (the
    // runtime's executable among them); `name` is NUL-terminated.
    let found = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    if found.is_null() {
        return None;
    }
    debug_assert_eq!(std::mem::size_of::<F>(), std::mem::size_of::<*mut c_void>());
    // SAFETY: a function pointer is pointer-sized; the caller vouches for
    // its signature.
    Some(unsafe { std::mem::transmute_copy::<*mut c_void, F>(&found) })
}

#[cfg(not(target_os = "linux"))]
unsafe fn lookup<F: Copy>(_name: &CStr) -> Option<F> {
    None
}

/// Whether this runtime can make external strings (both encodings).
pub fn available() -> bool {
    let f = functions();
    f.latin1.is_some() && f.utf16.is_some()
}

/// Tells V8 that memory outside its heap, which it may free by collecting,
/// grew (or shrank) by `bytes`.
///
/// # Safety
/// `env` is a live environment.
unsafe fn adjust(env: sys::napi_env, bytes: i64) {
    let mut total = 0;
    // SAFETY: the caller's `env`; the out-pointer is a local. Allowed in a
    // finalizer that runs during GC.
    unsafe { sys::napi_adjust_external_memory(env, bytes, &mut total) };
}

/// Frees the characters of an external string: `data` is the start of a
/// boxed slice of `hint` elements of `T`.
unsafe extern "C" fn free_chars<T>(env: *mut c_void, data: *mut c_void, hint: *mut c_void) {
    let len = hint as usize;
    // SAFETY: `env` is the environment the string was made in.
    unsafe { adjust(env.cast(), -((len * std::mem::size_of::<T>()) as i64)) };
    // SAFETY: `data` and `len` are exactly what `hand_over` leaked from a
    // `Box<[T]>`, and the runtime calls this once per string.
    drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(data.cast::<T>(), len)) });
}

/// An external string of `bytes`: Latin-1 (one byte a character) or, when
/// `two_byte`, UTF-16 code units in the platform's order (an odd last byte
/// is dropped). `None` when the runtime cannot make one; the caller then
/// decodes as before.
///
/// # Safety
/// `env` is the environment of the current call.
pub unsafe fn create(env: sys::napi_env, bytes: &[u8], two_byte: bool) -> Option<sys::napi_value> {
    let f = functions();
    if !two_byte {
        // SAFETY: the caller's `env`.
        return unsafe { hand_over(env, f.latin1?, bytes.into()) };
    }
    let len = bytes.len() / 2;
    let mut units: Vec<u16> = Vec::with_capacity(len);
    // SAFETY: `units` has room for `len` units (2 * len bytes), the two
    // ranges do not overlap, and every u16 bit pattern is valid.
    unsafe {
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), units.as_mut_ptr().cast::<u8>(), 2 * len);
        units.set_len(len);
    }
    // SAFETY: the caller's `env`.
    unsafe { hand_over(env, f.utf16?, units.into_boxed_slice()) }
}

/// Gives `chars` to the runtime as an external string. V8 counts them as
/// memory it may free, so that strings it barely sees on its heap still make
/// it collect them. The count goes up before the call: when the runtime
/// copies the characters instead, it has run `free_chars` (which takes the
/// count back) before it returns.
///
/// # Safety
/// `env` is the environment of the current call.
unsafe fn hand_over<T>(
    env: sys::napi_env,
    create: Create<T>,
    chars: Box<[T]>,
) -> Option<sys::napi_value> {
    let len = chars.len();
    let bytes = (len * std::mem::size_of::<T>()) as i64;
    // SAFETY: the caller's `env`.
    unsafe { adjust(env, bytes) };
    let chars = Box::into_raw(chars).cast::<T>();
    let mut value = std::ptr::null_mut();
    let mut copied = false;
    // SAFETY: `chars` holds `len` elements that live until the runtime calls
    // `free_chars::<T>` with the hint `len`; `value` and `copied` are locals.
    let status = unsafe {
        create(
            env,
            chars,
            len as isize,
            Some(free_chars::<T>),
            len as *mut c_void,
            &mut value,
            &mut copied,
        )
    };
    if status != sys::Status::napi_ok || value.is_null() {
        // The runtime did not take the characters: they leak (a failure here
        // means the environment is going away); their count is taken back.
        // SAFETY: the caller's `env`.
        unsafe { adjust(env, -bytes) };
        return None;
    }
    Some(value)
}
