//! `tl`, the command line. On Linux it defines the C `main` itself and starts without the standard
//! library's runtime set-up, which would cost a short process 6 % of its time; `cli::start` does
//! what `tl` needs of it (spec/NOTES.md, issue 24). (A test build keeps the harness's `main`.)
//!
//! Assumes (checked with rustc 1.95 and glibc 2.36): a panic does not unwind out of `main`
//! (`cli::main` catches it and reports the bug, exit 70), and nothing `tl` calls needs what the
//! runtime would have set up besides what `cli::start::prepare_process` does.
#![cfg_attr(all(target_os = "linux", not(test)), no_main)]

// The unwinder linked in from `libgcc_eh.a` (the one `gcc -static-libgcc` uses) rather than loaded
// from `libgcc_s.so.1`, whose loading and constructor cost a `tl append` 4 % (spec/NOTES.md, issue
// 24, tenth pass). Named here, in Timeline's own binaries, so that the library's users get no link
// arguments from it; named before the standard library's `libgcc_s`, so the linker takes the
// unwinder from this archive. (Tests, benchmarks and fuzz targets load `libgcc_s` as usual.)
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[link(name = "gcc_eh", kind = "static")]
unsafe extern "C" {}

#[cfg(all(target_os = "linux", not(test)))]
#[unsafe(no_mangle)]
extern "C" fn main(_argc: libc::c_int, _argv: *const *const libc::c_char) -> libc::c_int {
    timeline::cli::start::prepare_process();
    // `exit` flushes standard output first, as returning from a Rust `main` does.
    std::process::exit(i32::from(timeline::cli::main()))
}

#[cfg(not(all(target_os = "linux", not(test))))]
fn main() -> std::process::ExitCode {
    std::process::ExitCode::from(timeline::cli::main())
}
