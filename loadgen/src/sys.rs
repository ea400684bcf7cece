//! The little the load generator needs from the OS beyond sockets: the
//! file-descriptor limit, and the server's memory and CPU from `/proc`.
//! The only `unsafe` of the crate is here: one `getrlimit`, one
//! `setrlimit` and one `sysconf` call.

use std::fs;
use std::io;

/// Raises the soft `RLIMIT_NOFILE` to the hard limit, then checks that
/// `needed` descriptors fit. Returns the (new) soft limit, or a message
/// for the user.
pub fn raise_nofile(needed: u64) -> Result<u64, String> {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid, writable `rlimit` for the duration of the
    // call; getrlimit only writes into it.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } != 0 {
        return Err(format!(
            "getrlimit(RLIMIT_NOFILE): {}",
            io::Error::last_os_error()
        ));
    }
    let hard = lim.rlim_max;
    // An infinite hard limit still has a kernel ceiling (fs.nr_open): ask
    // for what is needed rather than for infinity.
    let target = if hard == libc::RLIM_INFINITY {
        needed.max(lim.rlim_cur)
    } else {
        hard
    };
    if hard != libc::RLIM_INFINITY && needed > hard {
        return Err(format!(
            "need {needed} file descriptors (connections + a few) but the hard \
             RLIMIT_NOFILE is {hard}: lower --conns or raise the hard limit \
             (ulimit -Hn, /etc/security/limits.conf)"
        ));
    }
    if lim.rlim_cur < target {
        let new = libc::rlimit {
            rlim_cur: target,
            rlim_max: hard,
        };
        // SAFETY: `new` is a valid `rlimit` that setrlimit only reads; the
        // soft limit does not exceed the hard one.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &new) } != 0 {
            return Err(format!(
                "setrlimit(RLIMIT_NOFILE, {target}): {}",
                io::Error::last_os_error()
            ));
        }
    }
    Ok(target)
}

/// Clock ticks per second, for `/proc/PID/stat`'s utime and stime.
fn clock_ticks() -> u64 {
    // SAFETY: sysconf takes no pointers and has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as u64 } else { 100 }
}

/// The server's memory and CPU, read from `/proc/PID/{status,stat}`.
#[derive(Clone, Copy, Debug, Default)]
pub struct ProcSample {
    /// Peak resident set size (`VmHWM`), kB.
    pub hwm_kb: u64,
    /// Current resident set size (`VmRSS`), kB.
    pub rss_kb: u64,
    /// User + system CPU time, ms.
    pub cpu_ms: u64,
    /// The system (kernel) part of `cpu_ms`, ms.
    pub sys_ms: u64,
}

/// Samples process `pid`, or says why it cannot.
pub fn sample(pid: u32) -> Result<ProcSample, String> {
    let status = fs::read_to_string(format!("/proc/{pid}/status"))
        .map_err(|e| format!("/proc/{pid}/status: {e}"))?;
    let kb = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
    };
    let hwm_kb = kb("VmHWM:").ok_or_else(|| format!("/proc/{pid}/status: no VmHWM"))?;
    let rss_kb = kb("VmRSS:").unwrap_or(0);

    let stat = fs::read_to_string(format!("/proc/{pid}/stat"))
        .map_err(|e| format!("/proc/{pid}/stat: {e}"))?;
    // The command name (field 2) is in parentheses and may hold spaces:
    // count fields from the last ')'. After it come field 3 (state)
    // onwards, so utime (14) and stime (15) are at indexes 11 and 12.
    let rest = stat
        .rsplit_once(')')
        .map(|(_, r)| r)
        .ok_or_else(|| format!("/proc/{pid}/stat: unexpected format"))?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let field = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
    let (Some(utime), Some(stime)) = (field(11), field(12)) else {
        return Err(format!("/proc/{pid}/stat: no utime/stime"));
    };
    let cpu_ms = (utime + stime) * 1000 / clock_ticks();
    let sys_ms = stime * 1000 / clock_ticks();
    Ok(ProcSample {
        hwm_kb,
        rss_kb,
        cpu_ms,
        sys_ms,
    })
}
