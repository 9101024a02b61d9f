import http2 from "node:http2";
import type net from "node:net";
import type { ConnectionLimits } from "../config.ts";

/** Limits on connections and streams that Node's servers leave to us, used by listen.ts. */

/**
 * Open connections per client address (the socket peer): one over the cap is closed at once. Returns false
 * for a refused socket.
 */
export function admission(maxPerAddress: number): (socket: net.Socket) => boolean {
  const open = new Map<string, number>();
  return (socket) => {
    const address = socket.remoteAddress ?? "";
    const n = (open.get(address) ?? 0) + 1;
    if (n > maxPerAddress) {
      socket.destroy();
      return false;
    }
    open.set(address, n);
    socket.once("close", () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
    return true;
  };
}

/**
 * HTTP/2 hygiene the http2 module leaves to us: a session with no traffic for idleTimeoutMs is closed (it also
 * ends a client that sent the preface and nothing else), and a stream whose request has not fully arrived within
 * requestTimeoutMs (headers and body; a stalled or trickled body) is reset with CANCEL.
 */
export function guardStreams(
  server: http2.Http2Server | http2.Http2SecureServer,
  limits: ConnectionLimits,
  stalls: StallGuard,
): void {
  server.on("session", (session: http2.ServerHttp2Session) => {
    session.setTimeout(limits.idleTimeoutMs, () => {
      session.goaway(http2.constants.NGHTTP2_NO_ERROR);
      session.destroy();
    });
  });
  server.on("stream", (stream: http2.ServerHttp2Stream) => {
    stalls.watch(stream, () => stream.close(http2.constants.NGHTTP2_CANCEL));
    if (stream.endAfterHeaders) return;
    const timer = setTimeout(() => stream.close(http2.constants.NGHTTP2_CANCEL), limits.requestTimeoutMs);
    timer.unref();
    const clear = (): void => clearTimeout(timer);
    stream.once("end", clear);
    stream.once("close", clear);
  });
}

export interface StallGuard {
  /** Calls `stall` once `w` has held queued bytes for the whole timeout (it is forgotten when it closes). */
  watch(w: { writableLength: number; once(event: "close", f: () => void): unknown }, stall: () => void): void;
  stop(): void;
}

/**
 * One timer for every connection and stream: a writable whose queue of unsent bytes has not been empty for
 * `timeoutMs` belongs to a client that stopped reading (the kernel's buffers are full), and is ended. A client that
 * reads slowly but keeps up empties the queue between answers; a single answer must be taken within the timeout.
 */
export function stallGuard(timeoutMs: number): StallGuard {
  const watched = new Map<{ writableLength: number }, { since: number; stall: () => void }>();
  const tick = Math.max(50, Math.min(1_000, timeoutMs / 4));
  const timer = setInterval(() => {
    const now = Date.now();
    for (const [w, state] of watched) {
      if (w.writableLength === 0) state.since = now;
      else if (now - state.since >= timeoutMs) {
        watched.delete(w);
        state.stall();
      }
    }
  }, tick);
  timer.unref();
  return {
    watch(w, stall) {
      watched.set(w, { since: Date.now(), stall });
      w.once("close", () => watched.delete(w));
    },
    stop: () => clearInterval(timer),
  };
}
