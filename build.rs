//! Links the unwinder into the binaries on Linux with glibc instead of loading `libgcc_s.so.1`.
//!
//! Rust's standard library needs the unwinder (panics and backtraces), and by default takes it from
//! the shared `libgcc_s`. Loading that library costs every process about a tenth of a millisecond:
//! another file to map and relocate, and a constructor (`__cpu_indicator_init`) that runs `cpuid`
//! nine times, an instruction a virtual machine traps (6 µs each on the benchmark's machine). A
//! `tl append` is one short process, so that is 4 % of it (spec/NOTES.md, issue 24). The static
//! unwinder (`libgcc_eh.a`, the one `gcc -static-libgcc` uses) has no constructor. `-bundle` leaves
//! the archive out of the library and names it to every link of a program that uses the library:
//! `tl`, `tl-mcp`, the tests, the benchmarks and the fuzz targets. A linker that does not take
//! symbols from an archive named before their first use (GNU ld) keeps `libgcc_s`, which works
//! the same.

fn main() {
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        println!("cargo::rustc-link-lib=static:-bundle=gcc_eh");
    }
    println!("cargo::rerun-if-changed=build.rs");
}
