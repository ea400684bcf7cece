//! A small HTTP/1.1 server: hyper on timerloop's sockets, no tokio
//! runtime.
//!
//! ```text
//! cargo run --release --example hyper_server --features tokio-io -- [PORT] [IDLE_MS]
//! curl -v 'http://127.0.0.1:PORT/sleep?ms=500'
//! ```
//!
//! `GET /` says hello; `GET /sleep?ms=N` answers after N ms (a
//! `time::sleep` in the handler; other connections go on meanwhile). A
//! connection with no request in flight for IDLE ms (default 5000) is
//! closed: the connection's future runs under `time::timeout_at`, whose
//! deadline is its last request's end plus IDLE. PORT 0 (the default)
//! picks a free port; it prints `listening on http://ADDR`.

use std::cell::Cell;
use std::convert::Infallible;
use std::io;
use std::pin::pin;
use std::rc::Rc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use timerloop::net::{TcpListener, TcpStream};
use timerloop::time::{self, Instant};
use timerloop::{EventLoop, task};

async fn route(req: Request<Incoming>) -> Result<Response<Full<Bytes>>, Infallible> {
    let sleep_ms = req
        .uri()
        .query()
        .and_then(|q| q.strip_prefix("ms=")?.parse().ok());
    let (status, body) = match (req.uri().path(), sleep_ms) {
        ("/", _) => (StatusCode::OK, "hello\n".to_string()),
        ("/sleep", Some(ms)) => {
            time::sleep(Duration::from_millis(ms)).await;
            (StatusCode::OK, format!("slept {ms} ms\n"))
        }
        ("/sleep", None) => (StatusCode::BAD_REQUEST, "usage: /sleep?ms=N\n".to_string()),
        _ => (StatusCode::NOT_FOUND, "not found\n".to_string()),
    };
    let mut res = Response::new(Full::new(Bytes::from(body)));
    *res.status_mut() = status;
    Ok(res)
}

/// Serves one connection until the client closes it or it has had no
/// request in flight for `idle`.
async fn serve(stream: TcpStream, idle: Duration) -> hyper::Result<()> {
    // Requests in flight, and when the last one ended.
    let busy = Rc::new(Cell::new(0u32));
    let last = Rc::new(Cell::new(Instant::now()));
    let (b, l) = (busy.clone(), last.clone());
    let service = service_fn(move |req| {
        let (b, l) = (b.clone(), l.clone());
        b.set(b.get() + 1);
        async move {
            let res = route(req).await;
            b.set(b.get() - 1);
            l.set(Instant::now());
            res
        }
    });
    let mut conn = pin!(http1::Builder::new().serve_connection(TokioIo::new(stream), service));
    loop {
        // While a request is in flight, look again `idle` from now.
        let base = if busy.get() > 0 {
            Instant::now()
        } else {
            last.get()
        };
        match time::timeout_at(base + idle, conn.as_mut()).await {
            Ok(done) => return done,
            Err(_) if busy.get() == 0 && last.get() + idle <= Instant::now() => {
                return Ok(()); // idle: dropping the connection closes it
            }
            Err(_) => {} // a request came or is in flight: wait on
        }
    }
}

async fn run(port: u16, idle: Duration) -> io::Result<()> {
    let listener = TcpListener::bind(("127.0.0.1", port)).await?;
    println!("listening on http://{}", listener.local_addr()?);
    loop {
        // A failed accept (out of descriptors, a peer gone before it was
        // accepted) ends neither the server nor the others' connections:
        // it is tried again shortly.
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                eprintln!("accept: {e}");
                time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        task::spawn(async move {
            if let Err(e) = serve(stream, idle).await {
                eprintln!("{peer}: {e}");
            }
        });
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let port = args.next().map_or(Ok(0), |p| p.parse())?;
    let idle = Duration::from_millis(args.next().map_or(Ok(5000), |ms| ms.parse())?);
    let mut lp = EventLoop::new();
    lp.block_on(run(port, idle))??;
    Ok(())
}
