//! hyper 1.x's HTTP/1.1 server and client on `timerloop::net`, with no
//! tokio runtime: the streams go to hyper through hyper-util's `TokioIo`
//! over the `tokio-io` impls, connections are tasks (`task::spawn`,
//! `JoinSet`), and handlers and clients wait on timerloop's timers. Real
//! loopback sockets; every time assertion is on the virtual clock.
//!
//! Also hyper's two runtime hooks: `rt::Executor` (a unit type that calls
//! `task::spawn`) and `rt::Timer`, whose `Sleep` must be `Send + Sync`
//! while timerloop's is not: [`LoopTimer`] keeps the loop's sleep in a
//! task of its own and hands hyper a `Send + Sync` handle to it, in safe
//! code, so the server's `header_read_timeout` works, exactly.
//!
//! Built only with the `tokio-io` feature (`required-features` in
//! Cargo.toml): `cargo test --release --features tokio-io --test hyper`.

use std::cell::Cell;
use std::convert::Infallible;
use std::future::{Future, poll_fn};
use std::io;
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::sync::{Arc, Mutex};
use std::task::{Poll, Waker};
use std::time::Duration;

use bytes::Bytes;
use futures_util::future::{self, Either};
use futures_util::stream::{self, LocalBoxStream, StreamExt};
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::{Frame, Incoming};
use hyper::client::conn::http1 as client;
use hyper::server::conn::http1 as server;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use timerloop::EventLoop;
use timerloop::net::{TcpListener, TcpStream};
use timerloop::task::{self, JoinSet};
use timerloop::time::{self, Instant};

/// A response body: whole, or streamed chunk by chunk (a local stream:
/// the chunks wait on the loop's timers, so the body is not `Send`, and
/// hyper's HTTP/1 server does not ask it to be).
type Body = http_body_util::Either<Full<Bytes>, StreamBody<LocalBoxStream<'static, Chunk>>>;
type Chunk = Result<Frame<Bytes>, Infallible>;

fn whole(b: impl Into<Bytes>) -> Body {
    http_body_util::Either::Left(Full::new(b.into()))
}

/// The query parameter `name` of `req` as a number.
fn param(req: &Request<Incoming>, name: &str) -> Option<u64> {
    req.uri()
        .query()?
        .split('&')
        .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('=')?.parse().ok())
}

/// The test server's routes:
/// - `GET /hello`: `hello`;
/// - `POST /echo`: the request's body;
/// - `GET /sleep?ms=N`: `slept N`, after a `time::sleep` of N ms;
/// - `GET /chunks?n=N`: N chunks `chunk i\n`, the first at once and each
///   next 10 ms later (a chunked body, streamed as it is made);
/// - `GET /runtime`: whether a tokio runtime is current (it never is).
async fn route(req: Request<Incoming>) -> Result<Response<Body>, hyper::Error> {
    let body = match req.uri().path() {
        "/hello" => whole("hello"),
        "/echo" => whole(req.into_body().collect().await?.to_bytes()),
        "/sleep" => {
            let ms = param(&req, "ms").unwrap_or(0);
            time::sleep(Duration::from_millis(ms)).await;
            whole(format!("slept {ms}"))
        }
        "/chunks" => {
            let n = param(&req, "n").unwrap_or(3);
            let chunks = stream::iter(0..n).then(|i| async move {
                if i > 0 {
                    time::sleep(Duration::from_millis(10)).await;
                }
                Ok(Frame::data(Bytes::from(format!("chunk {i}\n"))))
            });
            http_body_util::Either::Right(StreamBody::new(chunks.boxed_local()))
        }
        "/runtime" => {
            let current = tokio::runtime::Handle::try_current().is_ok();
            whole(format!("tokio runtime: {current}"))
        }
        _ => {
            let mut res = Response::new(whole("not found"));
            *res.status_mut() = StatusCode::NOT_FOUND;
            return Ok(res);
        }
    };
    Ok(Response::new(body))
}

/// A listener on loopback, made by socket2 with a listen backlog of 1024
/// and handed over with `TcpListener::from_std`, the way to choose a
/// backlog (`TcpListener::bind` has Node's, 511).
fn listener() -> io::Result<TcpListener> {
    use socket2::{Domain, Socket, Type};
    let s = Socket::new(Domain::IPV4, Type::STREAM, None)?;
    s.set_reuse_address(true)?;
    s.bind(
        &"127.0.0.1:0"
            .parse::<std::net::SocketAddr>()
            .unwrap()
            .into(),
    )?;
    s.listen(1024)?;
    TcpListener::from_std(s.into())
}

/// Serves every connection to a new loopback listener with `builder` and
/// [`route`], one task per connection, counting them in `accepted`; returns
/// its address. The accept loop is a task too; it ends with the loop.
async fn spawn_server(builder: server::Builder, accepted: Rc<Cell<u32>>) -> io::Result<String> {
    let listener = listener()?;
    let addr = listener.local_addr()?;
    task::spawn(async move {
        loop {
            let (stream, _) = listener.accept().await.expect("accept");
            stream.set_nodelay(true).expect("nodelay");
            accepted.set(accepted.get() + 1);
            let conn = builder.serve_connection(TokioIo::new(stream), service_fn(route));
            task::spawn(conn);
        }
    });
    Ok(addr.to_string())
}

/// hyper's executor on the loop: every future it is given becomes a task.
/// hyper's HTTP/1 never calls one (HTTP/2 and hyper-util's pooled client
/// do); here it runs the client connections' futures.
#[derive(Clone, Copy, Debug)]
struct LoopExecutor;

impl<F: Future + 'static> hyper::rt::Executor<F> for LoopExecutor {
    fn execute(&self, fut: F) {
        drop(task::spawn(fut)); // detached, as tokio::spawn's handle dropped
    }
}

/// A hyper client connection to `addr`, its connection future run by
/// [`LoopExecutor`]. The client writes each request at once
/// (`TCP_NODELAY`), so the virtual clock never runs ahead of its bytes.
async fn connect(
    addr: &str,
) -> Result<client::SendRequest<Full<Bytes>>, Box<dyn std::error::Error>> {
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    let (sender, conn) = client::handshake(TokioIo::new(stream)).await?;
    hyper::rt::Executor::execute(&LoopExecutor, conn);
    Ok(sender)
}

fn get(path: &str) -> Request<Full<Bytes>> {
    Request::get(path)
        .header(hyper::header::HOST, "test")
        .body(Full::default())
        .unwrap()
}

fn post(path: &str, body: impl Into<Bytes>) -> Request<Full<Bytes>> {
    Request::post(path)
        .header(hyper::header::HOST, "test")
        .body(Full::new(body.into()))
        .unwrap()
}

/// A response's status and whole body, as text.
async fn text(res: Response<Incoming>) -> Result<(StatusCode, String), hyper::Error> {
    let status = res.status();
    let bytes = res.into_body().collect().await?.to_bytes();
    Ok((status, String::from_utf8(bytes.to_vec()).unwrap()))
}

type TestResult<T = ()> = Result<T, Box<dyn std::error::Error>>;

/// GET and POST on one keep-alive connection: five requests, one accept,
/// every answer right, a 404 among them; the handler sees no tokio
/// runtime.
#[test]
fn get_post_and_keep_alive_on_one_connection() {
    let mut lp = EventLoop::new();
    let accepted = Rc::new(Cell::new(0));
    let a = accepted.clone();
    let got = lp
        .block_on(async move {
            let addr = spawn_server(server::Builder::new(), a).await?;
            let mut c = connect(&addr).await?;
            let mut got = Vec::new();
            for req in [
                get("/hello"),
                post("/echo", "a body to echo"),
                get("/nowhere"),
                post("/echo", "x".repeat(100_000)),
                get("/runtime"),
            ] {
                c.ready().await?;
                let (status, body) = text(c.send_request(req).await?).await?;
                got.push((status.as_u16(), body));
            }
            TestResult::Ok(got)
        })
        .unwrap()
        .unwrap();
    let want = [
        (200, "hello".to_string()),
        (200, "a body to echo".to_string()),
        (404, "not found".to_string()),
        (200, "x".repeat(100_000)),
        (200, "tokio runtime: false".to_string()),
    ];
    assert!(
        got == want,
        "{:?}",
        got.iter().map(|(s, b)| (s, b.len())).collect::<Vec<_>>()
    );
    assert_eq!(accepted.get(), 1, "one connection for all five requests");
}

/// A streamed (chunked) response on the virtual clock: each chunk comes
/// to the client as the server makes it, 10 ms apart, in virtual time.
#[test]
fn a_streamed_response_arrives_chunk_by_chunk() {
    let mut lp = EventLoop::with_virtual_clock();
    let (chunked, frames) = lp
        .block_on(async {
            let addr = spawn_server(server::Builder::new(), Rc::default()).await?;
            let mut c = connect(&addr).await?;
            let res = c.send_request(get("/chunks?n=4")).await?;
            let chunked = res.headers().get(hyper::header::TRANSFER_ENCODING).cloned();
            let mut body = res.into_body();
            let mut frames = Vec::new();
            while let Some(frame) = body.frame().await {
                if let Ok(data) = frame?.into_data() {
                    frames.push((
                        Instant::now().as_millis(),
                        String::from_utf8(data.to_vec())?,
                    ));
                }
            }
            TestResult::Ok((chunked, frames))
        })
        .unwrap()
        .unwrap();
    assert_eq!(
        chunked.as_ref().map(|v| v.as_bytes()),
        Some(&b"chunked"[..])
    );
    assert_eq!(
        frames,
        [
            (0, "chunk 0\n".to_string()),
            (10, "chunk 1\n".to_string()),
            (20, "chunk 2\n".to_string()),
            (30, "chunk 3\n".to_string()),
        ]
    );
}

/// A handler that sleeps 250 ms answers at exactly virtual 250; a client
/// that gives a request 100 ms gets `Elapsed` at exactly virtual 100.
#[test]
fn a_sleeping_handler_and_a_client_timeout_on_the_virtual_clock() {
    let mut lp = EventLoop::with_virtual_clock();
    let (body, at) = lp
        .block_on(async {
            let addr = spawn_server(server::Builder::new(), Rc::default()).await?;
            let mut c = connect(&addr).await?;
            let (_, body) = text(c.send_request(get("/sleep?ms=250")).await?).await?;
            TestResult::Ok((body, Instant::now().as_millis()))
        })
        .unwrap()
        .unwrap();
    assert_eq!((body.as_str(), at, lp.now()), ("slept 250", 250, 250));

    let mut lp = EventLoop::with_virtual_clock();
    let (timed_out, at) = lp
        .block_on(async {
            let addr = spawn_server(server::Builder::new(), Rc::default()).await?;
            let mut c = connect(&addr).await?;
            let res = time::timeout(
                Duration::from_millis(100),
                c.send_request(get("/sleep?ms=250")),
            )
            .await;
            TestResult::Ok((res.is_err(), Instant::now().as_millis()))
        })
        .unwrap()
        .unwrap();
    assert_eq!((timed_out, at, lp.now()), (true, 100, 100));
}

/// Graceful shutdown with hyper-util's `GracefulShutdown` (a tokio
/// `watch`, no runtime) over connections held in a `JoinSet`. Three
/// clients each have a 100 ms request in flight and a fourth is idle on
/// a keep-alive connection when, at virtual 50, the server is told to
/// stop: it stops accepting, the idle connection is closed at once, the
/// three requests complete (with `connection: close`) and the shutdown
/// is done at 100, with every connection's task ended cleanly.
#[test]
fn graceful_shutdown_completes_the_requests_in_flight() {
    let mut lp = EventLoop::with_virtual_clock();
    let (answers, idle_closed_at, stopped_at, conns, refused) = lp
        .block_on(async {
            let listener = listener()?;
            let addr = listener.local_addr()?.to_string();
            let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
            let server = task::spawn(async move {
                let graceful = hyper_util::server::graceful::GracefulShutdown::new();
                let mut conns = JoinSet::new();
                let mut stopped = pin!(stopped);
                // Accepts until told to stop.
                while let Either::Left((accepted, _)) =
                    future::select(pin!(listener.accept()), stopped.as_mut()).await
                {
                    let (stream, _) = accepted?;
                    stream.set_nodelay(true)?;
                    let conn = server::Builder::new()
                        .serve_connection(TokioIo::new(stream), service_fn(route));
                    conns.spawn(graceful.watch(conn));
                }
                drop(listener); // no new connections
                graceful.shutdown().await;
                let stopped_at = Instant::now().as_millis();
                let results = conns.join_all().await;
                io::Result::Ok((stopped_at, results.iter().filter(|r| r.is_ok()).count()))
            });

            // The idle client: one request, then nothing, until closed.
            let stream = TcpStream::connect(&addr).await?;
            stream.set_nodelay(true)?;
            let (mut idle, idle_conn) = client::handshake(TokioIo::new(stream)).await?;
            let idle_conn = task::spawn(async move {
                let res = idle_conn.await;
                (res.is_ok(), Instant::now().as_millis())
            });
            text(idle.send_request(get("/hello")).await?).await?;

            let mut in_flight = JoinSet::new();
            for _ in 0..3 {
                let mut c = connect(&addr).await?;
                in_flight.spawn(async move {
                    let res = c.send_request(get("/sleep?ms=100")).await?;
                    let close = res.headers().get(hyper::header::CONNECTION).cloned();
                    let (_, body) = text(res).await?;
                    Ok::<_, hyper::Error>((
                        body,
                        close.map(|v| v.as_bytes().to_vec()),
                        Instant::now().as_millis(),
                    ))
                });
            }
            time::sleep(Duration::from_millis(50)).await;
            stop.send(()).unwrap();
            let answers: Vec<_> = in_flight
                .join_all()
                .await
                .into_iter()
                .collect::<Result<_, _>>()?;
            let (idle_ok, idle_closed_at) = idle_conn.await.unwrap();
            assert!(idle_ok, "the idle connection closed cleanly");
            let (stopped_at, conns) = server.await.unwrap()?;
            let refused = TcpStream::connect(&addr).await.is_err();
            TestResult::Ok((answers, idle_closed_at, stopped_at, conns, refused))
        })
        .unwrap()
        .unwrap();
    let want = ("slept 100".to_string(), Some(b"close".to_vec()), 100);
    assert_eq!(answers, [want.clone(), want.clone(), want]);
    assert_eq!(
        idle_closed_at, 50,
        "the idle connection closes as the shutdown begins"
    );
    assert_eq!(
        stopped_at, 100,
        "the shutdown waits for the requests in flight"
    );
    assert_eq!(conns, 4, "every connection ended without an error");
    assert!(refused, "no connection is accepted after the shutdown");
}

/// 200 clients at once on one loop, each with its own connection and
/// body: every one gets its own body back. (The listener's backlog is
/// 1024, as [`listener`] says; with a backlog of 128, the test passes
/// too, but the connects past the 129th wait a second for their SYN's
/// retransmission.)
#[test]
fn two_hundred_concurrent_connections() {
    const CLIENTS: usize = 200;
    let mut lp = EventLoop::new();
    let accepted = Rc::new(Cell::new(0));
    let a = accepted.clone();
    let answers = lp
        .block_on(async move {
            let addr = Rc::new(spawn_server(server::Builder::new(), a).await?);
            let mut clients = JoinSet::new();
            for i in 0..CLIENTS {
                let addr = addr.clone();
                clients.spawn(async move {
                    let mut c = connect(&addr).await.map_err(|e| e.to_string())?;
                    let body = format!("client {i} says {}", "hi ".repeat(i));
                    let res = c
                        .send_request(post("/echo", body.clone()))
                        .await
                        .map_err(|e| e.to_string())?;
                    let (status, got) = text(res).await.map_err(|e| e.to_string())?;
                    Ok::<_, String>(status == StatusCode::OK && got == body)
                });
            }
            let answers = clients.join_all().await;
            TestResult::Ok(answers)
        })
        .unwrap()
        .unwrap();
    assert_eq!(answers.len(), CLIENTS);
    let right = answers.iter().filter(|a| matches!(a, Ok(true))).count();
    assert_eq!(
        right,
        CLIENTS,
        "{:?}",
        answers.iter().find(|a| !matches!(a, Ok(true)))
    );
    assert_eq!(accepted.get() as usize, CLIENTS);
}

/// hyper's `rt::Timer` on the loop.
///
/// hyper asks for `Timer + Send + Sync + 'static` (`Builder::timer`), and
/// its `rt::Sleep` is `Send + Sync + Future<Output = ()>`. timerloop's
/// `time::Sleep` is neither (it holds the loop's `Rc`s), so it cannot be
/// handed to hyper as it is. Instead each sleep is a task of the current
/// loop that owns the loop's `time::Sleep`, and hyper gets [`LoopSleep`],
/// a `Send + Sync` handle (`Arc<Mutex<..>>` with two wakers) that the task
/// marks fired. Dropping the handle wakes the task, which ends and so
/// drops the loop's sleep: its timer is cleared and keeps nothing alive.
///
/// hyper's instants are `std::time::Instant`s, and on a virtual clock the
/// loop's time is not the machine's: `now` counts the loop's time from a
/// fixed `std` instant (`origin`), and deadlines are carried back the same
/// way, so hyper's deadlines are loop deadlines, exact on either clock.
///
/// Like everything on the loop, it is used on the loop's thread: `sleep`
/// spawns, and `now` reads the current loop (both panic where no loop is
/// current), as hyper calls them from inside the connection's poll.
#[derive(Clone, Copy, Debug)]
struct LoopTimer {
    origin: std::time::Instant,
}

impl LoopTimer {
    fn new() -> LoopTimer {
        LoopTimer {
            origin: std::time::Instant::now(),
        }
    }
}

impl hyper::rt::Timer for LoopTimer {
    fn sleep(&self, duration: Duration) -> Pin<Box<dyn hyper::rt::Sleep>> {
        Box::pin(LoopSleep::new(time::sleep(duration)))
    }

    fn sleep_until(&self, deadline: std::time::Instant) -> Pin<Box<dyn hyper::rt::Sleep>> {
        let at = Instant::from_millis(0) + deadline.saturating_duration_since(self.origin);
        Box::pin(LoopSleep::new(time::sleep_until(at)))
    }

    fn now(&self) -> std::time::Instant {
        self.origin + Duration::from_millis(Instant::now().as_millis())
    }
}

/// What a [`LoopSleep`] shares with the task that owns the loop's sleep.
#[derive(Default)]
struct SleepState {
    fired: bool,
    dropped: bool,
    /// Whoever polls the `LoopSleep` (hyper's connection task).
    waiter: Option<Waker>,
    /// The task that owns the loop's sleep.
    owner: Option<Waker>,
}

/// A `Send + Sync` handle to a `time::Sleep` owned by a task of its own.
struct LoopSleep(Arc<Mutex<SleepState>>);

impl LoopSleep {
    fn new(sleep: time::Sleep) -> LoopSleep {
        let state = Arc::new(Mutex::new(SleepState::default()));
        let shared = state.clone();
        let mut sleep = Box::pin(sleep);
        task::spawn(poll_fn(move |cx| {
            let mut st = shared.lock().unwrap();
            if st.dropped {
                return Poll::Ready(()); // drops the sleep: its timer is cleared
            }
            if sleep.as_mut().poll(cx).is_pending() {
                st.owner = Some(cx.waker().clone());
                return Poll::Pending;
            }
            st.fired = true;
            let waiter = st.waiter.take();
            drop(st);
            if let Some(w) = waiter {
                w.wake();
            }
            Poll::Ready(())
        }));
        LoopSleep(state)
    }
}

impl Future for LoopSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<()> {
        let mut st = self.0.lock().unwrap();
        if st.fired {
            return Poll::Ready(());
        }
        st.waiter = Some(cx.waker().clone());
        Poll::Pending
    }
}

impl hyper::rt::Sleep for LoopSleep {}

impl Drop for LoopSleep {
    fn drop(&mut self) {
        let owner = {
            let mut st = self.0.lock().unwrap();
            st.dropped = true;
            st.owner.take()
        };
        if let Some(w) = owner {
            w.wake();
        }
    }
}

/// [`LoopTimer`] on its own, on the virtual clock: a sleep completes at
/// its exact deadline (`sleep` and `sleep_until` through `now`); a sleep
/// dropped before its deadline leaves no timer behind (`run` returns at
/// once, the clock where it was); and `reset` (hyper's default: a new
/// sleep for the old) moves the deadline.
#[test]
fn loop_timer_sleeps_exactly_and_leaves_nothing_when_dropped() {
    use hyper::rt::Timer;

    fn assert_send_sync<T: Send + Sync>(_: &T) {}

    let mut lp = EventLoop::with_virtual_clock();
    let timer = LoopTimer::new();
    let times = lp
        .block_on(async move {
            let mut times = Vec::new();
            let s = timer.sleep(Duration::from_millis(30));
            assert_send_sync(&s);
            s.await;
            times.push(Instant::now().as_millis());
            timer
                .sleep_until(timer.now() + Duration::from_millis(20))
                .await;
            times.push(Instant::now().as_millis());
            let mut s = timer.sleep(Duration::from_millis(1000));
            timer.reset(&mut s, timer.now() + Duration::from_millis(5));
            s.await;
            times.push(Instant::now().as_millis());
            // Gone before its deadline: its timer must not outlive it.
            drop(timer.sleep(Duration::from_secs(3600)));
            times
        })
        .unwrap();
    assert_eq!(times, [30, 50, 55]);
    lp.run().unwrap();
    assert_eq!(lp.now(), 55, "the dropped sleep's timer is gone");
}

/// A connection that has not sent its whole head closes at `now` plus
/// `header_read_timeout`, in virtual time, exactly, however it trickles;
/// a keep-alive connection idle after its response closes as long after
/// it (hyper starts the same timer for the next head); and with a timer
/// set and no timeout configured, hyper's default is 30 s.
#[test]
fn header_read_timeout_with_the_loop_timer() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// Sends `parts` of a request head at virtual 0, 1000, 2000, ...,
    /// then reads: returns what came back and when the server closed.
    async fn trickle(addr: &str, parts: &[&str]) -> TestResult<(String, u64)> {
        let mut s = TcpStream::connect(addr).await?;
        s.set_nodelay(true)?;
        for (i, part) in parts.iter().enumerate() {
            if i > 0 {
                time::sleep(Duration::from_secs(1)).await;
            }
            AsyncWriteExt::write_all(&mut s, part.as_bytes()).await?;
        }
        let mut got = String::new();
        s.read_to_string(&mut got).await?;
        Ok((got, Instant::now().as_millis()))
    }

    let run = |builder: server::Builder, parts: &'static [&'static str]| {
        let mut lp = EventLoop::with_virtual_clock();
        lp.block_on(async move {
            let addr = spawn_server(builder, Rc::default()).await?;
            trickle(&addr, parts).await
        })
        .unwrap()
        .unwrap()
    };
    let mut five = server::Builder::new();
    five.timer(LoopTimer::new())
        .header_read_timeout(Duration::from_secs(5));

    // A head in three parts, never finished.
    let (got, at) = run(
        five.clone(),
        &["GET /hello HTTP/1.1\r\n", "Host: test\r\n", "X-Slow: 1\r\n"],
    );
    assert_eq!((got.as_str(), at), ("", 5000));

    // A whole request at 0, then nothing: answered, closed at 5000.
    let (got, at) = run(five, &["GET /hello HTTP/1.1\r\nHost: test\r\n\r\n"]);
    assert!(
        got.starts_with("HTTP/1.1 200 OK\r\n") && got.ends_with("\r\n\r\nhello"),
        "{got}"
    );
    assert_eq!(at, 5000);

    // hyper's default once a timer is set.
    let mut default = server::Builder::new();
    default.timer(LoopTimer::new());
    let (got, at) = run(default, &["GET /hello HTTP/1.1\r\n"]);
    assert_eq!((got.as_str(), at), ("", 30_000));

    // No timer, so no timeout: the unfinished head waits as long as the
    // client does (here its own 60 s).
    let mut lp = EventLoop::with_virtual_clock();
    let gave_up = lp
        .block_on(async {
            let addr = spawn_server(server::Builder::new(), Rc::default()).await?;
            let client = trickle(&addr, &["GET /hello HTTP/1.1\r\n"]);
            TestResult::Ok(
                time::timeout(Duration::from_secs(60), client)
                    .await
                    .is_err(),
            )
        })
        .unwrap()
        .unwrap();
    assert!(gave_up);
    assert_eq!(lp.now(), 60_000);
}

/// The same on the virtual clock: 200 clients, each sending three
/// requests on its keep-alive connection to a handler that sleeps 10 to
/// 100 ms (by client): every answer comes at its exact virtual time, the
/// third at three times the sleep, and the loop ends at 300.
#[test]
fn two_hundred_keep_alive_clients_exact_on_the_virtual_clock() {
    const CLIENTS: u64 = 200;
    let mut lp = EventLoop::with_virtual_clock();
    let answers = lp
        .block_on(async move {
            let addr = Rc::new(spawn_server(server::Builder::new(), Rc::default()).await?);
            let mut clients = JoinSet::new();
            for i in 0..CLIENTS {
                let addr = addr.clone();
                clients.spawn(async move {
                    let mut c = connect(&addr).await.map_err(|e| e.to_string())?;
                    let ms = (i % 10) * 10 + 10;
                    let mut got = Vec::new();
                    for _ in 0..3 {
                        let req = get(&format!("/sleep?ms={ms}"));
                        let res = c.send_request(req).await.map_err(|e| e.to_string())?;
                        let (_, body) = text(res).await.map_err(|e| e.to_string())?;
                        got.push((body, Instant::now().as_millis()));
                    }
                    Ok::<_, String>((ms, got))
                });
            }
            TestResult::Ok(clients.join_all().await)
        })
        .unwrap()
        .unwrap();
    assert_eq!(answers.len(), CLIENTS as usize);
    for answer in answers {
        let (ms, got) = answer.unwrap();
        let body = format!("slept {ms}");
        assert_eq!(
            got,
            [(body.clone(), ms), (body.clone(), 2 * ms), (body, 3 * ms)]
        );
    }
    assert_eq!(lp.now(), 300);
}
