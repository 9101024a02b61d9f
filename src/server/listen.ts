import { readFileSync } from "node:fs";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import http2, { type Http2ServerRequest, type Http2ServerResponse } from "node:http2";
import net from "node:net";
import { Duplex } from "node:stream";

export type NodeHandler = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => void;

export interface Listener {
  port: number;
  /** Stop accepting, let in-flight requests finish (up to graceMs), then close every connection. */
  close(graceMs: number): Promise<void>;
}

const PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

/**
 * One port for gRPC (h2c prior knowledge), Connect, gRPC-Web and REST over HTTP/1.1 and HTTP/2.
 * Cleartext http2 with allowHTTP1 does not serve HTTP/1.1, so each connection's first bytes are sniffed:
 * the HTTP/2 preface goes to an http2 server, anything else to an http/1.1 server. With TLS, ALPN decides.
 */
export async function listen(handler: NodeHandler, opts: { port: number; host: string; tls?: { certFile: string; keyFile: string } | undefined }): Promise<Listener> {
  const sockets = new Set<net.Socket | Duplex>();
  const track = (s: net.Socket | Duplex): void => {
    sockets.add(s);
    s.once("close", () => sockets.delete(s));
  };
  let inFlight = 0;
  let drained: (() => void) | undefined;
  const counted: NodeHandler = (req, res) => {
    inFlight++;
    res.once("close", () => {
      inFlight--;
      if (inFlight === 0) drained?.();
    });
    handler(req, res);
  };

  let outer: net.Server;
  const servers: { close(): unknown }[] = [];
  if (opts.tls) {
    const secure = http2.createSecureServer(
      { allowHTTP1: true, cert: readFileSync(opts.tls.certFile), key: readFileSync(opts.tls.keyFile) },
      counted,
    );
    secure.on("secureConnection", track);
    outer = secure;
  } else {
    const h1 = http.createServer({ keepAliveTimeout: 65_000 }, counted);
    const h2 = http2.createServer({}, counted);
    servers.push(h1, h2);
    outer = net.createServer({ noDelay: true }, (socket) => {
      track(socket);
      sniff(socket, (isH2, head) => {
        if (isH2) {
          const replay = new ReplaySocket(socket, head);
          track(replay);
          h2.emit("connection", replay);
        } else {
          socket.unshift(head);
          h1.emit("connection", socket);
          socket.resume();
        }
      });
    });
  }

  await new Promise<void>((resolve, reject) => {
    outer.once("error", reject);
    outer.listen(opts.port, opts.host, () => resolve());
  });
  const address = outer.address();
  const port = typeof address === "object" && address !== null ? address.port : opts.port;

  return {
    port,
    async close(graceMs) {
      outer.close();
      for (const s of servers) s.close();
      if (inFlight > 0) {
        await new Promise<void>((resolve) => {
          drained = resolve;
          setTimeout(resolve, graceMs).unref();
        });
      }
      for (const s of sockets) s.destroy();
    },
  };
}

/**
 * The peer address of a request. On h2c the http2 session wraps our ReplaySocket (not a net.Socket) in a
 * stream adapter that does not forward remoteAddress; the adapter keeps the wrapped stream as `stream`.
 */
export function remoteAddressOf(req: IncomingMessage | Http2ServerRequest): string {
  const socket = req.socket as (net.Socket & { stream?: { remoteAddress?: string } }) | undefined;
  return socket?.remoteAddress ?? socket?.stream?.remoteAddress ?? "";
}

/** Reads until the bytes seen either are or cannot be the HTTP/2 connection preface. */
function sniff(socket: net.Socket, decide: (isH2: boolean, head: Buffer) => void): void {
  let head: Buffer = Buffer.alloc(0);
  const onData = (chunk: Buffer): void => {
    head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
    const n = Math.min(head.length, PREFACE.length);
    const prefixMatches = head.subarray(0, n).equals(PREFACE.subarray(0, n));
    if (prefixMatches && head.length < PREFACE.length) return;
    socket.off("data", onData);
    socket.pause();
    decide(prefixMatches, head);
  };
  socket.on("data", onData);
  socket.once("error", () => socket.destroy());
}

/**
 * http2 reads from the socket handle directly, so unshift() cannot give back sniffed bytes; this Duplex
 * replays them and then forwards the socket both ways.
 */
class ReplaySocket extends Duplex {
  readonly #socket: net.Socket;

  constructor(socket: net.Socket, head: Buffer) {
    super();
    this.#socket = socket;
    this.push(head);
    socket.on("data", (chunk: Buffer) => {
      if (!this.push(chunk)) socket.pause();
    });
    socket.once("end", () => this.push(null));
    socket.once("close", () => this.destroy());
    socket.on("error", (err) => this.destroy(err));
  }

  get remoteAddress(): string | undefined {
    return this.#socket.remoteAddress;
  }
  get remotePort(): number | undefined {
    return this.#socket.remotePort;
  }
  get localAddress(): string | undefined {
    return this.#socket.localAddress;
  }
  get localPort(): number | undefined {
    return this.#socket.localPort;
  }
  get encrypted(): boolean {
    return false;
  }
  setTimeout(ms: number, cb?: () => void): this {
    this.#socket.setTimeout(ms, cb);
    return this;
  }
  setNoDelay(noDelay?: boolean): this {
    this.#socket.setNoDelay(noDelay);
    return this;
  }
  setKeepAlive(enable?: boolean, delay?: number): this {
    this.#socket.setKeepAlive(enable, delay);
    return this;
  }

  override _read(): void {
    this.#socket.resume();
  }
  override _write(chunk: Buffer, encoding: BufferEncoding, cb: (err?: Error | null) => void): void {
    this.#socket.write(chunk, encoding, cb);
  }
  override _final(cb: (err?: Error | null) => void): void {
    this.#socket.end(cb);
  }
  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    this.#socket.destroy(err ?? undefined);
    cb(err);
  }
}
