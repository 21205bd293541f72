//! What a `tl` process needs before it runs, when it starts without the standard library's runtime.
//!
//! On Linux `tl` defines the C `main` itself (`src/bin/tl.rs`). The runtime's set-up before a Rust
//! `main` costs a short process about 0.15 ms on the benchmark's machine, 6 % of a `tl append`
//! (spec/NOTES.md, issue 24): it reads and parses `/proc/self/maps` to find the main thread's stack,
//! and maps, protects and later unmaps a signal stack so that a stack overflow prints a message
//! before the process aborts. `tl` keeps the parts of that set-up its behaviour depends on, here:
//! `SIGPIPE` ignored, closed standard descriptors opened on `/dev/null`, and a stack overflow
//! reported as the bug it is (`report_stack_overflow`), with a signal stack that costs no mapping.
//!
//! Assumes (checked with glibc 2.36 on x86_64 Linux, rustc 1.95): the main thread's stack grows
//! down from just above `main`'s frame by at most `RLIMIT_STACK`, and the kernel faults an access
//! below it (its guard gap) with `SIGSEGV` at the address accessed.

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};

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
    report_stack_overflow();
}

/// The highest address of the main thread's stack `tl` knows of: a local of
/// `report_stack_overflow`, which `main` calls through `prepare_process`, just below `main`'s frame.
static STACK_TOP: AtomicUsize = AtomicUsize::new(0);

/// The signal stack the fault handler runs on (a full stack has no room left for it). A static in
/// `.bss`: no mapping to make, and no page of it touched unless a fault comes.
const SIGNAL_STACK: usize = 64 << 10;
static mut SIGNAL_STACK_BYTES: [u8; SIGNAL_STACK] = [0; SIGNAL_STACK];

/// The report of a stack overflow, as `tl` reports any bug (JSON on standard error, exit 70).
const OVERFLOW_MESSAGE: &str = concat!(
    r#"{"error":"internal error: tl overflowed its stack; "#,
    bug_advice!(),
    "\"}\n"
);

/// Handle `SIGSEGV` and `SIGBUS` on their own stack, so that a stack overflow (a bug: `tl`
/// recurses nowhere without a bound) ends with a message saying so and the documented exit status
/// of a bug, instead of dying silently of the signal as the process did without the runtime.
/// Any other fault keeps the signal's default action. (Failures here only leave that default.)
fn report_stack_overflow() {
    let top = 0u8;
    STACK_TOP.store(std::ptr::addr_of!(top) as usize, Ordering::Relaxed);
    // SAFETY: the signal stack is a static only the kernel uses, from here on; the handler is an
    // `extern "C"` function that only calls async-signal-safe functions.
    unsafe {
        let stack = libc::stack_t {
            ss_sp: std::ptr::addr_of_mut!(SIGNAL_STACK_BYTES).cast(),
            ss_flags: 0,
            ss_size: SIGNAL_STACK,
        };
        if libc::sigaltstack(&stack, std::ptr::null_mut()) != 0 {
            return;
        }
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_fault as *const () as usize;
        action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGSEGV, &action, std::ptr::null_mut());
        libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
    }
}

/// A fault: when its address lies in the stack's reach below `STACK_TOP` (`RLIMIT_STACK`, and the
/// kernel's guard gap of 1 MiB below it), the stack overflowed: say so and exit 70 (the spec's
/// status of an `internal` error, a bug). Otherwise the
/// default action is restored and the faulting access runs again, ending the process by the signal.
extern "C" fn on_fault(signal: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid `siginfo_t` for a handler installed with `SA_SIGINFO`;
    // `getrlimit`, `write`, `_exit` and `signal` are async-signal-safe.
    unsafe {
        let address = (*info).si_addr() as usize;
        let top = STACK_TOP.load(Ordering::Relaxed);
        let mut limit: libc::rlimit = std::mem::zeroed();
        let reach = if libc::getrlimit(libc::RLIMIT_STACK, &mut limit) == 0
            && limit.rlim_cur != libc::RLIM_INFINITY
        {
            usize::try_from(limit.rlim_cur).unwrap_or(usize::MAX)
        } else {
            // (Unlimited: a stack that has grown a gibibyte is taken as overflowed.)
            1 << 30
        };
        if address < top && top - address <= reach.saturating_add(1 << 20) {
            let message = OVERFLOW_MESSAGE.as_bytes();
            libc::write(2, message.as_ptr().cast(), message.len());
            libc::_exit(70);
        }
        libc::signal(signal, libc::SIG_DFL);
    }
}
