//! `tl`, the command line. On Linux it defines the C `main` itself and starts without the standard
//! library's runtime set-up, which would cost a short process 6 % of its time; `cli::start` does
//! what `tl` needs of it (spec/NOTES.md, issue 24). (A test build keeps the harness's `main`.)
#![cfg_attr(all(target_os = "linux", not(test)), no_main)]

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
