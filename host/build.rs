//! Links the `spotbot` executable with packed relative relocations (`DT_RELR`) where the C
//! library that will load it understands them.
//!
//! A position-independent executable carries one relocation entry (24 bytes) per pointer the
//! loader must adjust: 2.2 MB for spotbot, read once at start and then kept resident as file
//! pages for the life of the process. RELR packs them into a bitmap a hundredth of that size,
//! which is most of what separates the idle service from its 40 MB budget
//! (docs/benchmarks.md, "Idle footprint"), while keeping address-space randomisation.
//!
//! glibc loads RELR from 2.36 on and refuses an executable that needs it on an older one (the
//! linker records the need as the symbol version `GLIBC_ABI_DT_RELR`). So the flag is passed
//! only when building for the machine that builds (no cross-compilation) and that machine's
//! glibc is 2.36 or newer; anything else links as before.

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    if builds_for_itself() && host_glibc_at_least(2, 36) {
        println!("cargo::rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Whether the target is this build machine's own Linux with glibc.
fn builds_for_itself() -> bool {
    let var = |name| std::env::var(name).unwrap_or_default();
    var("TARGET") == var("HOST")
        && var("CARGO_CFG_TARGET_OS") == "linux"
        && var("CARGO_CFG_TARGET_ENV") == "gnu"
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn host_glibc_at_least(major: u32, minor: u32) -> bool {
    use std::ffi::{CStr, c_char};

    unsafe extern "C" {
        /// glibc's own version, e.g. "2.36" (`<gnu/libc-version.h>`).
        fn gnu_get_libc_version() -> *const c_char;
    }
    // SAFETY: glibc returns a pointer to a static NUL-terminated string.
    let version = unsafe { CStr::from_ptr(gnu_get_libc_version()) };
    let mut parts = version.to_str().unwrap_or_default().split('.').map(|p| p.parse::<u32>());
    match (parts.next(), parts.next()) {
        (Some(Ok(found_major)), Some(Ok(found_minor))) => {
            (found_major, found_minor) >= (major, minor)
        }
        _ => false,
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn host_glibc_at_least(_major: u32, _minor: u32) -> bool {
    false
}
