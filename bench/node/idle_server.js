'use strict';
// Idle-timeout TCP line-echo server: the Node twin of the Rust example
// idle_server (issue 11), driven by the load generator in loadgen/.
//
//   node bench/node/idle_server.js --port PORT --idle-ms MS
//
// Protocol (the Rust server implements the same):
//  * Listens on 127.0.0.1:PORT (PORT 0 = a free port) and prints
//    `listening on 127.0.0.1:PORT` (the real port) once it accepts.
//  * Every line read (up to and including `\n`) is written back verbatim.
//    Bytes after the last `\n` of a chunk wait for the rest of their line.
//  * One idle timer per connection, MS long, refreshed by activity (below).
//    When it fires the server writes `idle timeout\n` and closes the
//    connection (a graceful end: pending echoes go out first, then FIN).
//  * Backpressure: when socket.write() returns false (the kernel send
//    buffer is full and Node has queued bytes), reading is paused until
//    'drain', so a client that sends but does not read cannot make the
//    server buffer without bound; nothing is dropped, nothing spins.
//  * On SIGINT or SIGTERM: prints ONE line
//    `accepted=A closed_idle=I closed_by_peer=P max_open=M` and exits 0.
//    accepted = connections accepted; closed_idle = connections the idle
//    timer closed; closed_by_peer = connections that ended otherwise (the
//    peer closed or reset first); max_open = most connections open at once.
//
// The idle timer is Node's own socket timeout, socket.setTimeout(MS), armed
// once per connection: Node refreshes it itself (`_unrefTimer`, i.e.
// timer.refresh() on an unref'd timer in the MS list). Its notion of
// activity is wider than the protocol's "a line was read":
//  1. every read from the socket refreshes it (onStreamRead), even a chunk
//     that ends mid-line, so a peer trickling one byte per MS/2 never times
//     out here, while the protocol would close it MS after its last
//     complete line;
//  2. every write refreshes it (_writeGeneric), and so does every async
//     write completion (onWriteComplete);
//  3. when it fires while a write is still making progress (the queued
//     byte count changed since the last check), Node suppresses the
//     'timeout' event and re-arms it (Socket.prototype._onTimeout), so a
//     slow reader draining a backlog of echoes keeps its connection.
// For a client that sends whole lines and reads its echoes (the load
// generator), every refresh of 1-3 happens within microseconds of the line
// being read, so the two definitions agree; the comparison measures the
// same thing. The deadline is also computed on libuv's cached loop time
// (whole ms, rounded down, read when the poll phase started), so the
// 'timeout' can come up to ~1 ms (plus the poll phase's own duration)
// earlier than MS after the exact instant the line was read; loadgen's
// early-close check allows for that clock granularity (see
// loadgen/src/main.rs).

const net = require('net');

function usage(msg) {
  process.stderr.write(`idle_server: ${msg}\n` +
    'usage: node bench/node/idle_server.js --port PORT --idle-ms MS\n');
  process.exit(2);
}

let port = null;
let idleMs = null;
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === '--port') port = Number(argv[++i]);
  else if (a === '--idle-ms') idleMs = Number(argv[++i]);
  else usage(`unknown argument ${a}`);
}
if (!Number.isInteger(port) || port < 0 || port > 65535) usage('bad --port');
if (!Number.isInteger(idleMs) || idleMs < 1) usage('bad --idle-ms');

const NL = 0x0a;
const IDLE_MSG = Buffer.from('idle timeout\n');

let accepted = 0;
let closedIdle = 0;
let closedByPeer = 0;
let open = 0;
let maxOpen = 0;

function onConnection(socket) {
  accepted++;
  open++;
  if (open > maxOpen) maxOpen = open;

  let partial = null; // bytes after the last '\n' seen, or null
  let timedOut = false;

  socket.setNoDelay(true);
  socket.setTimeout(idleMs);

  socket.on('data', (chunk) => {
    if (timedOut) return; // the goodbye is written; later lines are ignored
    const last = chunk.lastIndexOf(NL);
    if (last === -1) {
      partial = partial === null ? chunk : Buffer.concat([partial, chunk]);
      return;
    }
    // Echo every complete line of (partial + chunk) with one write.
    let out = chunk.subarray(0, last + 1);
    if (partial !== null) {
      out = Buffer.concat([partial, out]);
      partial = null;
    }
    if (last + 1 < chunk.length) partial = Buffer.from(chunk.subarray(last + 1));
    if (!socket.write(out)) socket.pause();
  });

  socket.on('drain', () => {
    if (!timedOut) socket.resume();
  });

  socket.on('timeout', () => {
    if (timedOut) return;
    timedOut = true;
    closedIdle++;
    socket.setTimeout(0);
    // Queued echoes go first, then the goodbye, then FIN. Keep reading
    // (discarding) so the peer's FIN is seen and the socket is destroyed.
    socket.end(IDLE_MSG);
    socket.resume();
  });

  // 'error' (e.g. ECONNRESET) is always followed by 'close'.
  socket.on('error', () => {});

  socket.on('close', () => {
    open--;
    if (!timedOut) closedByPeer++;
  });
}

const server = net.createServer(onConnection);
server.on('error', (err) => {
  process.stderr.write(`idle_server: ${err.message}\n`);
  process.exit(1);
});
server.listen({ host: '127.0.0.1', port, backlog: 511 }, () => {
  // stdout is synchronous for files and pipes on Linux, so this is flushed.
  process.stdout.write(`listening on 127.0.0.1:${server.address().port}\n`);
});

function stop() {
  process.stdout.write(`accepted=${accepted} closed_idle=${closedIdle} ` +
    `closed_by_peer=${closedByPeer} max_open=${maxOpen}\n`);
  process.exit(0);
}
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
