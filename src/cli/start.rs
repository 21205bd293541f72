//! What a `tl` process needs before it runs, when it starts without the standard library's runtime.
//!
//! On Linux `tl` defines the C `main` itself (`src/bin/tl.rs`). The runtime's set-up before a Rust
//! `main` costs a short process about 0.15 ms on the benchmark's machine, 6 % of a `tl append`
//! (spec/NOTES.md, issue 24): it reads and parses `/proc/self/maps` to find the main thread's stack,
//! and maps, protects and later unmaps a signal stack so that a stack overflow prints a message
//! before the process aborts. `tl` keeps the two parts of that set-up its behaviour depends on, here;
//! a stack overflow, a bug in any case, ends the process with `SIGSEGV` instead of that message.

use std::io;

/// Ignores `SIGPIPE`, so that output to a closed pipe is an error `tl` handles (`tl log | head`
/// stops quietly) rather than a signal that kills it mid-write; and opens `/dev/null` on each of
/// standard input, output and error that is closed, as the runtime does, so that no file `tl` opens
/// gets one of those numbers and the bytes meant for a terminal. (No path shows that today: Rust's
/// standard streams read a closed descriptor as empty and write to it as to `/dev/null`, and SQLite
/// refuses the numbers 0 to 2 for its files; it keeps any later file of `tl` safe too.)
pub fn prepare_process() {
    let mut standard = [0, 1, 2].map(|fd| libc::pollfd {
        fd,
        events: 0,
        revents: 0,
    });
    loop {
        // SAFETY: three valid `pollfd`s, alive for the whole call; a zero timeout.
        if unsafe { libc::poll(standard.as_mut_ptr(), 3, 0) } != -1 {
            break;
        }
        match io::Error::last_os_error().raw_os_error() {
            Some(libc::EINTR) => continue,
            // `poll` itself could not run (no memory, a limit): ask each descriptor instead.
            _ => {
                for entry in &mut standard {
                    // SAFETY: `F_GETFD` only reads the descriptor's flags.
                    let closed = unsafe { libc::fcntl(entry.fd, libc::F_GETFD) } == -1
                        && io::Error::last_os_error().raw_os_error() == Some(libc::EBADF);
                    entry.revents = if closed { libc::POLLNVAL } else { 0 };
                }
                break;
            }
        }
    }
    for entry in standard {
        if entry.revents & libc::POLLNVAL != 0 {
            // SAFETY: a constant NUL-terminated path; the lowest free number is the closed one,
            // as they are opened in order.
            let opened = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR, 0) };
            if opened == -1 {
                // The runtime aborts here too: writing the database's bytes to the terminal, or
                // the terminal's to the database, is worse than not starting.
                std::process::abort();
            }
        }
    }
    // SAFETY: `SIG_IGN` needs no handler; `tl` starts no thread before this.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
}
