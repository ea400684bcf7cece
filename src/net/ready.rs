//! [`Ready`]: what a socket's readiness wait found (tokio's
//! `tokio::io::Ready`).

use std::fmt;
use std::ops;

const READABLE: u8 = 0b0001;
const WRITABLE: u8 = 0b0010;
const READ_CLOSED: u8 = 0b0100;
const WRITE_CLOSED: u8 = 0b1000;

/// The readiness a socket's `ready(interest)` found, in the directions
/// asked for (tokio's `tokio::io::Ready`, with the same constants and
/// methods): readable or writable as far as the loop knows (a false
/// positive is possible: a `try_` operation may still say `WouldBlock`),
/// and whether the peer closed the read direction or the write
/// direction is closed. A closed direction stays closed, and counts as
/// ready: `is_readable` is true once the read direction is closed (a
/// read then returns 0 at once).
///
/// tokio's `ERROR` and `PRIORITY` are not here: the loop's sockets are
/// not registered for them (mio's [`Interest`](super::Interest) is what
/// the waits take). Its bits are private, so more may come without
/// breaking anyone.
///
/// ```
/// use timerloop::{EventLoop, net::{Interest, TcpListener, TcpStream}};
/// let mut lp = EventLoop::new();
/// lp.block_on(async {
///     let l = TcpListener::bind("127.0.0.1:0").await?;
///     let c = TcpStream::connect(l.local_addr()?).await?;
///     let ready = c.ready(Interest::WRITABLE).await?;
///     assert!(ready.is_writable() && !ready.is_readable());
///     std::io::Result::Ok(())
/// })
/// .unwrap()
/// .unwrap();
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Ready(u8);

impl Ready {
    /// Nothing ready.
    ///
    /// ```
    /// use timerloop::net::Ready;
    /// assert!(Ready::EMPTY.is_empty());
    /// assert!(!Ready::EMPTY.is_readable());
    /// ```
    pub const EMPTY: Ready = Ready(0);

    /// Readable.
    ///
    /// ```
    /// use timerloop::net::Ready;
    /// assert!(Ready::READABLE.is_readable());
    /// assert!(!Ready::READABLE.is_writable());
    /// ```
    pub const READABLE: Ready = Ready(READABLE);

    /// Writable.
    ///
    /// ```
    /// use timerloop::net::Ready;
    /// assert!(Ready::WRITABLE.is_writable());
    /// assert!(!Ready::WRITABLE.is_readable());
    /// ```
    pub const WRITABLE: Ready = Ready(WRITABLE);

    /// The read direction is closed (the peer shut its writing down, or
    /// the connection is gone): reads return 0 or an error at once.
    ///
    /// ```
    /// use timerloop::net::Ready;
    /// assert!(Ready::READ_CLOSED.is_read_closed());
    /// assert!(Ready::READ_CLOSED.is_readable()); // a closed direction is ready
    /// ```
    pub const READ_CLOSED: Ready = Ready(READ_CLOSED);

    /// The write direction is closed: the loop saw it hang up or fail, and
    /// writes fail at once. On a [`UdpSocket`](super::UdpSocket), an ICMP
    /// error (a connected peer's port unreachable) also sets it, as in
    /// tokio, and sends still work once the error was read.
    ///
    /// ```
    /// use timerloop::net::Ready;
    /// assert!(Ready::WRITE_CLOSED.is_write_closed());
    /// assert!(Ready::WRITE_CLOSED.is_writable());
    /// ```
    pub const WRITE_CLOSED: Ready = Ready(WRITE_CLOSED);

    /// Every readiness there is.
    ///
    /// ```
    /// use timerloop::net::Ready;
    /// let all = Ready::ALL;
    /// assert!(all.is_readable() && all.is_writable());
    /// assert!(all.is_read_closed() && all.is_write_closed());
    /// assert_eq!(all - Ready::READ_CLOSED - Ready::WRITE_CLOSED, Ready::READABLE | Ready::WRITABLE);
    /// ```
    pub const ALL: Ready = Ready(READABLE | WRITABLE | READ_CLOSED | WRITE_CLOSED);

    /// Whether nothing is ready.
    ///
    /// ```
    /// use timerloop::net::Ready;
    /// assert!(Ready::EMPTY.is_empty());
    /// assert!(!Ready::WRITABLE.is_empty());
    /// ```
    pub fn is_empty(self) -> bool {
        self == Ready::EMPTY
    }

    /// Whether it is readable, or its read direction closed.
    ///
    /// ```
    /// use timerloop::net::Ready;
    /// assert!(Ready::READABLE.is_readable());
    /// assert!(Ready::READ_CLOSED.is_readable());
    /// assert!(!Ready::WRITABLE.is_readable());
    /// ```
    pub fn is_readable(self) -> bool {
        self.0 & (READABLE | READ_CLOSED) != 0
    }

    /// Whether it is writable, or its write direction closed.
    ///
    /// ```
    /// use timerloop::net::Ready;
    /// assert!(Ready::WRITABLE.is_writable());
    /// assert!(Ready::WRITE_CLOSED.is_writable());
    /// assert!(!Ready::READABLE.is_writable());
    /// ```
    pub fn is_writable(self) -> bool {
        self.0 & (WRITABLE | WRITE_CLOSED) != 0
    }

    /// Whether the read direction is closed.
    ///
    /// ```
    /// use timerloop::net::Ready;
    /// assert!(Ready::READ_CLOSED.is_read_closed());
    /// assert!(!Ready::READABLE.is_read_closed());
    /// ```
    pub fn is_read_closed(self) -> bool {
        self.0 & READ_CLOSED != 0
    }

    /// Whether the write direction is closed.
    ///
    /// ```
    /// use timerloop::net::Ready;
    /// assert!(Ready::WRITE_CLOSED.is_write_closed());
    /// assert!(!Ready::WRITABLE.is_write_closed());
    /// ```
    pub fn is_write_closed(self) -> bool {
        self.0 & WRITE_CLOSED != 0
    }
}

/// Either's readiness.
impl ops::BitOr for Ready {
    type Output = Ready;

    fn bitor(self, other: Ready) -> Ready {
        Ready(self.0 | other.0)
    }
}

/// Adds `other`'s readiness.
impl ops::BitOrAssign for Ready {
    fn bitor_assign(&mut self, other: Ready) {
        self.0 |= other.0;
    }
}

/// The readiness both have.
impl ops::BitAnd for Ready {
    type Output = Ready;

    fn bitand(self, other: Ready) -> Ready {
        Ready(self.0 & other.0)
    }
}

/// `self`'s readiness without `other`'s.
impl ops::Sub for Ready {
    type Output = Ready;

    fn sub(self, other: Ready) -> Ready {
        Ready(self.0 & !other.0)
    }
}

/// As tokio's: each `is_` method's answer.
impl fmt::Debug for Ready {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Ready")
            .field("is_readable", &self.is_readable())
            .field("is_writable", &self.is_writable())
            .field("is_read_closed", &self.is_read_closed())
            .field("is_write_closed", &self.is_write_closed())
            .finish()
    }
}
