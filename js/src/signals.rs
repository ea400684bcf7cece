//! Signals for `process.on(signal)` and `process.kill`, on Unix.
//!
//! Invariants:
//! - a watched signal is one registration with the OS (signal-hook) read
//!   through one I/O source on the loop, unrefed, as Node's signal handle:
//!   it never keeps a loop alive;
//! - a registration is never undone (signal-hook cannot give the default
//!   action back), so the host decides on each arrival whether a listener
//!   takes it or the default action runs ([`default_action`]).

use timerloop::{BoxError, EventLoop};

/// Node's errno for a signal no program may watch (`uv_signal_start`).
pub(crate) const EINVAL: i32 = 22;
/// `EPERM`: what `process.kill` gives an embedded program.
pub(crate) const EPERM: i32 = 1;

/// Whether the OS lets a program take `signum`: not `SIGKILL` or
/// `SIGSTOP` (Node's `EINVAL` too), nor the faults signal-hook refuses
/// (`SIGILL`, `SIGFPE`, `SIGSEGV`), nor a number that is no signal.
pub(crate) fn can_watch(signum: i32) -> bool {
    #[cfg(unix)]
    {
        signal_hook::low_level::signal_name(signum).is_some()
            && !signal_hook::consts::FORBIDDEN.contains(&signum)
    }
    #[cfg(not(unix))]
    {
        let _ = signum;
        false
    }
}

/// Registers `signum` and calls `arrived` with it in a poll phase each
/// time it comes (once per arrival signal-hook saw; arrivals close
/// together may merge, as the OS merges them).
///
/// # Errors
///
/// The errno if the OS refuses the registration or the loop its source.
#[cfg(unix)]
pub(crate) fn watch(
    lp: &mut EventLoop,
    signum: i32,
    mut arrived: impl FnMut(&mut EventLoop, i32) -> Result<(), BoxError> + 'static,
) -> Result<(), i32> {
    use signal_hook_mio::v1_0::Signals;
    let errno = |e: std::io::Error| e.raw_os_error().unwrap_or(EINVAL);
    let signals = Signals::new([signum]).map_err(errno)?;
    let h = lp
        .insert_io(
            signals,
            timerloop::mio::Interest::READABLE,
            move |lp, signals: &mut Signals, _| {
                let got: Vec<i32> = signals.pending().collect();
                for n in got {
                    arrived(lp, n)?;
                }
                Ok::<(), BoxError>(())
            },
        )
        .map_err(|e| errno(e.error))?;
    let _ = lp.unref_io(h);
    Ok(())
}

#[cfg(not(unix))]
pub(crate) fn watch(
    _: &mut EventLoop,
    _: i32,
    _: impl FnMut(&mut EventLoop, i32) -> Result<(), BoxError> + 'static,
) -> Result<(), i32> {
    Err(EINVAL)
}

/// What `signum` does to a process that does not catch it: ends it (as
/// killed by the signal), stops it, or nothing.
pub(crate) fn default_action(signum: i32) {
    #[cfg(unix)]
    {
        let _ = signal_hook::low_level::emulate_default_handler(signum);
    }
    #[cfg(not(unix))]
    {
        let _ = signum;
    }
}

/// `kill(2)` as Node's `process._kill` makes it: `pid` above 0 a process,
/// 0 this process's group, below -1 the group `-pid`; `signum` 0 only
/// checks that the target exists.
///
/// # Errors
///
/// The errno: `ESRCH` no such process, `EPERM` not allowed, `EINVAL` a
/// number that is no signal, or a `pid` of -1 (every process the user
/// may signal), which this host refuses.
pub(crate) fn kill(pid: i32, signum: i32) -> Result<(), i32> {
    #[cfg(unix)]
    {
        use nix::sys::signal::Signal;
        if pid == -1 {
            return Err(EINVAL);
        }
        let sig = match signum {
            0 => None,
            n => Some(Signal::try_from(n).map_err(|_| EINVAL)?),
        };
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), sig).map_err(|e| e as i32)
    }
    #[cfg(not(unix))]
    {
        let _ = (pid, signum);
        Err(EINVAL)
    }
}
