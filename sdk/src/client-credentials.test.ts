import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { createClientCredentials } from "./client-credentials.ts";
import { HotelOpsError } from "./errors.ts";

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

interface Seen {
  authorization: string | undefined;
  contentType: string | undefined;
  form: URLSearchParams;
}

/** A stand-in token endpoint recording what it got; `answer` decides the response. */
async function startTokenServer(answer: (n: number) => { status: number; body: unknown }) {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let raw = "";
    req.on("data", (c: Buffer) => (raw += c.toString("utf8")));
    req.on("end", () => {
      seen.push({
        authorization: req.headers.authorization,
        contentType: req.headers["content-type"],
        form: new URLSearchParams(raw),
      });
      const { status, body } = answer(seen.length);
      setTimeout(() => {
        res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
        res.end(JSON.stringify(body));
      }, 15);
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

const ok = (n: number) => ({
  status: 200,
  body: {
    access_token: `tok-${n}`,
    token_type: "Bearer",
    expires_in: 900,
    scope: "availability.read reservations.read",
  },
});

describe("client credentials", () => {
  it("posts a form with HTTP Basic (form-encoded id and secret) and caches the token until shortly before expiry", async () => {
    const srv = await startTokenServer(ok);
    let clock = 0;
    const creds = createClientCredentials({
      baseUrl: srv.baseUrl,
      clientId: "cli ent",
      clientSecret: "s:e+c/r%t",
      scope: "availability.read",
      now: () => clock,
    });
    expect(await creds.accessToken()).toBe("tok-1");
    const first = srv.seen[0]!;
    expect(first.contentType).toBe("application/x-www-form-urlencoded");
    expect(first.form.get("grant_type")).toBe("client_credentials");
    expect(first.form.get("scope")).toBe("availability.read");
    const [id, secret] = Buffer.from(first.authorization!.replace(/^Basic /, ""), "base64")
      .toString("utf8")
      .split(":");
    expect(decodeURIComponent(id!.replace(/\+/g, " "))).toBe("cli ent");
    expect(decodeURIComponent(secret!.replace(/\+/g, " "))).toBe("s:e+c/r%t");
    expect(creds.scopes()).toEqual(["availability.read", "reservations.read"]);

    clock = 839_000; // 900 s life, renewed 60 s early
    expect(await creds.accessToken()).toBe("tok-1");
    clock = 840_001;
    expect(await creds.accessToken()).toBe("tok-2");
    expect(srv.seen).toHaveLength(2);
  });

  it("shares one token request among concurrent callers and replaces a refused token once", async () => {
    const srv = await startTokenServer(ok);
    const creds = createClientCredentials({ baseUrl: srv.baseUrl, clientId: "c", clientSecret: "s" });
    const tokens = await Promise.all(Array.from({ length: 20 }, () => creds.accessToken()));
    expect(new Set(tokens)).toEqual(new Set(["tok-1"]));
    expect(srv.seen).toHaveLength(1);
    const fresh = await Promise.all([creds.refresh("tok-1"), creds.refresh("tok-1")]);
    expect(fresh).toEqual(["tok-2", "tok-2"]);
    expect(await creds.refresh("tok-1")).toBe("tok-2");
    expect(srv.seen).toHaveLength(2);
  });

  it("throws the OAuth error and tries again on the next call", async () => {
    const srv = await startTokenServer((n) =>
      n === 1
        ? { status: 401, body: { error: "invalid_client", error_description: "Unknown client or wrong secret." } }
        : ok(n),
    );
    const creds = createClientCredentials({ baseUrl: srv.baseUrl, clientId: "c", clientSecret: "wrong" });
    const err = await creds.accessToken().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HotelOpsError);
    expect(err).toMatchObject({ status: 401, code: "invalid_client", message: "Unknown client or wrong secret." });
    expect(await creds.accessToken()).toBe("tok-2");
  });
});
