import { afterAll, beforeAll, describe, expect, it } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createHttpIntegrator, IntegratorTransportError } from "../../src/modules/invoices/integrator.ts";
import { startIntegratorReceiver, type IntegratorReceiver } from "../helpers/integrator-receiver.ts";

// The HTTP integrator client against loopback servers: what each answer means (a state, a rejection, or a
// transport error that is retried), the token, the ETTN as the key of repeated uploads.
let receiver: IntegratorReceiver;
let odd: http.Server;
let oddUrl: string;
/** status and body the odd server answers next */
let next: { status: number; body: string } = { status: 200, body: "" };

beforeAll(async () => {
  receiver = await startIntegratorReceiver();
  odd = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => res.writeHead(next.status).end(next.body));
  });
  await new Promise<void>((r) => odd.listen(0, "127.0.0.1", r));
  oddUrl = `http://127.0.0.1:${(odd.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await receiver?.close();
  odd?.closeAllConnections();
  await new Promise((r) => odd?.close(r));
});

const doc = (ettn: string) => ({ ettn, number: "DEM2026000000001", profileId: "EARSIVFATURA", xml: "<Invoice/>" });
const ettn = "019ad8a0-1c2b-7e3f-8a4b-5c6d7e8f9a0b";

async function transportError(p: Promise<unknown>): Promise<string> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(IntegratorTransportError);
  return (err as Error).message;
}

describe("HTTP integrator client", () => {
  it("uploads, repeats the same ETTN as the same document, asks the status and cancels", async () => {
    const client = createHttpIntegrator({ url: `${receiver.url}/`, token: receiver.token, timeoutMs: 2000 });
    receiver.script.push("receive");
    expect(await client.send(doc(ettn))).toEqual({ status: "RECEIVED", reason: "" });
    expect(await client.send(doc(ettn))).toEqual({ status: "ACCEPTED", reason: "" });
    expect(receiver.documents.get(ettn)).toMatchObject({ created: 1, uploads: 2, xml: "<Invoice/>" });
    expect(await client.status(ettn)).toEqual({ status: "ACCEPTED", reason: "" });
    await client.cancel(ettn);
    expect(await client.status(ettn)).toMatchObject({ status: "CANCELLED" });
    // never received: nothing to cancel
    await client.cancel("019ad8a0-0000-7000-8000-000000000000");
    receiver.script.push("reject");
    expect(await client.send(doc("019ad8a0-1111-7000-8000-000000000000"))).toEqual({
      status: "REJECTED",
      reason: "Satıcı unvanı GİB kaydıyla uyuşmuyor",
    });
  });

  it("asks GİB's e-Fatura registry through the integrator: registered, not registered, unknown, failures", async () => {
    const client = createHttpIntegrator({ url: receiver.url, token: receiver.token, timeoutMs: 2000 });
    receiver.registry.set("9876543217", true);
    receiver.registry.set("1234567890", false);
    expect(await client.isEFaturaUser("9876543217")).toBe(true);
    expect(await client.isEFaturaUser("1234567890")).toBe(false);
    expect(await client.isEFaturaUser("1111111114")).toBe(false); // 404: not in the registry
    expect(receiver.requests.slice(-3)).toEqual([
      "GET /registry/9876543217",
      "GET /registry/1234567890",
      "GET /registry/1111111114",
    ]);
    // never a path built from anything but digits
    expect(await transportError(client.isEFaturaUser("../documents/x"))).toMatch(/not a VKN/);
    const wrongToken = createHttpIntegrator({ url: receiver.url, token: "wrong", timeoutMs: 2000 });
    expect(await transportError(wrongToken.isEFaturaUser("9876543217"))).toMatch(/HTTP 401/);
    const odds = createHttpIntegrator({ url: oddUrl, token: "t", timeoutMs: 2000 });
    next = { status: 200, body: '{"eFatura": "yes"}' };
    expect(await transportError(odds.isEFaturaUser("9876543217"))).toMatch(/unreadable answer/);
    next = { status: 503, body: "later" };
    expect(await transportError(odds.isEFaturaUser("9876543217"))).toMatch(/HTTP 503/);
  });

  it("a wrong token, a 5xx, a timeout, a refused connection or an unreadable answer is a transport error", async () => {
    const wrong = createHttpIntegrator({ url: receiver.url, token: "wrong", timeoutMs: 2000 });
    expect(await transportError(wrong.send(doc(ettn)))).toMatch(/^HTTP 401/);
    receiver.script.push("error");
    const client = createHttpIntegrator({ url: receiver.url, token: receiver.token, timeoutMs: 300 });
    expect(await transportError(client.send(doc(ettn)))).toMatch(/^HTTP 503/);
    receiver.script.push("hang");
    expect(await transportError(client.send(doc(ettn)))).toBe("no answer within 300 ms");
    receiver.release();
    const closed = createHttpIntegrator({ url: "http://127.0.0.1:9", token: "t", timeoutMs: 2000 });
    expect(await transportError(closed.status(ettn))).toMatch(/^connection failed/);
    const other = createHttpIntegrator({ url: oddUrl, token: "t", timeoutMs: 2000 });
    next = { status: 200, body: "<html>ok</html>" };
    expect(await transportError(other.send(doc(ettn)))).toBe("unreadable answer (HTTP 200)");
    next = { status: 409, body: JSON.stringify({ status: "ACCEPTED" }) };
    expect(await other.send(doc(ettn))).toEqual({ status: "ACCEPTED", reason: "" });
    next = { status: 400, body: "cbc:ID eksik" };
    expect(await other.send(doc(ettn))).toEqual({ status: "REJECTED", reason: "cbc:ID eksik" });
    next = { status: 409, body: "cannot cancel" };
    expect(await transportError(other.cancel(ettn))).toBe("HTTP 409: cannot cancel");
  });
});
