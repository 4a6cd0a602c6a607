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
    latin1: Option<Create<std::ffi::c_char>>,
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

/// Frees the characters of an external string: `data` is the start of a
/// boxed slice of `hint` elements of `T`.
unsafe extern "C" fn free_chars<T>(env: *mut c_void, data: *mut c_void, hint: *mut c_void) {
    let len = hint as usize;
    let mut total = 0;
    // SAFETY: `env` is the environment the string was made in; adjusting
    // external memory is allowed in a finalizer that runs during GC.
    unsafe {
        sys::napi_adjust_external_memory(
            env.cast(),
            -((len * std::mem::size_of::<T>()) as i64),
            &mut total,
        );
    }
    // SAFETY: `data` and `len` are exactly what `create` leaked from a
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
    let mut value = std::ptr::null_mut();
    let mut copied = false;
    // The bytes the characters take (an odd last byte of UTF-16 is dropped).
    let held = if two_byte {
        bytes.len() & !1
    } else {
        bytes.len()
    };
    let status = if two_byte {
        let create = f.utf16?;
        let len = bytes.len() / 2;
        let mut units: Vec<u16> = Vec::with_capacity(len);
        // SAFETY: `units` has room for `len` units (2 * len bytes), the two
        // ranges do not overlap, and every u16 bit pattern is valid.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), units.as_mut_ptr().cast::<u8>(), 2 * len);
            units.set_len(len);
        }
        let units = units.into_boxed_slice();
        let chars = Box::into_raw(units).cast::<u16>();
        // SAFETY: `chars` holds `len` units that live until the runtime
        // calls `free_chars::<u16>` with the hint `len` (on a copy: before
        // it returns); `value` and `copied` are locals.
        unsafe {
            create(
                env,
                chars,
                len as isize,
                Some(free_chars::<u16>),
                len as *mut c_void,
                &mut value,
                &mut copied,
            )
        }
    } else {
        let create = f.latin1?;
        let chars: Box<[u8]> = bytes.into();
        let len = chars.len();
        let chars = Box::into_raw(chars).cast::<std::ffi::c_char>();
        // SAFETY: as above, with `free_chars::<u8>`.
        unsafe {
            create(
                env,
                chars,
                len as isize,
                Some(free_chars::<u8>),
                len as *mut c_void,
                &mut value,
                &mut copied,
            )
        }
    };
    // On failure the runtime did not take the characters: they leak (a
    // failure here means the environment is going away).
    if status != sys::Status::napi_ok || value.is_null() {
        return None;
    }
    if !copied {
        let mut total = 0;
        // SAFETY: `env` is this call's. V8 counts the characters as memory it
        // may free, so that strings it barely sees on its heap still make it
        // collect them (the finalizer takes the count back).
        unsafe { sys::napi_adjust_external_memory(env, held as i64, &mut total) };
    }
    Some(value)
}
