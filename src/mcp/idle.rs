//! Noticing a quiet client. `tl-mcp` does the work no answer waits for (indexing messages for
//! search) only after its client has sent nothing for a moment: an agent is quiet while its model
//! thinks, and a burst of calls is not slowed by that work.

#[cfg(unix)]
use std::time::Duration;

/// How long the client must send nothing before the session does work of its own.
#[cfg(unix)]
const QUIET: Duration = Duration::from_millis(20);

/// Whether this platform can tell a quiet client (`poll` on standard input, Unix). Elsewhere the
/// changes do that work themselves, as a `tl` process does.
pub const AVAILABLE: bool = cfg!(unix);

/// Whether standard input brings nothing for `QUIET`: `false` as soon as data or the end of input
/// arrives, and when the wait fails.
#[cfg(unix)]
pub fn stdin_quiet() -> bool {
    let mut stdin = libc::pollfd {
        fd: 0,
        events: libc::POLLIN,
        revents: 0,
    };
    let millis = libc::c_int::try_from(QUIET.as_millis()).unwrap_or(libc::c_int::MAX);
    // SAFETY: one valid `pollfd`, alive for the whole call.
    unsafe { libc::poll(&mut stdin, 1, millis) == 0 }
}

#[cfg(not(unix))]
pub fn stdin_quiet() -> bool {
    false
}

/// Whether standard input can be read without waiting: data or the end of input has arrived.
/// Without `poll` (Windows) nothing is read ahead, and a cancel is seen only once it is read.
#[cfg(unix)]
pub fn stdin_ready() -> bool {
    let mut stdin = libc::pollfd {
        fd: 0,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid `pollfd`, alive for the whole call.
    unsafe { libc::poll(&mut stdin, 1, 0) > 0 }
}

#[cfg(not(unix))]
pub fn stdin_ready() -> bool {
    false
}
