import { readFileSync } from "node:fs";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../lib/clock.ts";
import type { AppError } from "../../errors.ts";
import { createIdentityScanService, type UploadedImage } from "./identity.service.ts";
import { createOcrEngine } from "./ocr.ts";

const fixture = (name: string): UploadedImage => ({
  content: readFileSync(new URL(`../../../test/fixtures/identity/${name}`, import.meta.url)),
  contentType: "image/jpeg",
  filename: name,
});
const lines: string[] = [];
const logger = pino({ level: "info" }, { write: (l: string) => void lines.push(l) });
const ocr = createOcrEngine({ logger, maxWaiting: 3 });
const service = createIdentityScanService({ ocr, clock: new ManualClock("2026-05-01T10:00:00.000Z"), logger });
afterAll(() => ocr.close());

async function failure(p: Promise<unknown>): Promise<AppError> {
  return p.then(
    () => expect.fail("expected a failure"),
    (err: unknown) => err as AppError,
  );
}

describe("identity scan service (real OCR on rendered photos)", () => {
  it("reads the specimen passport from a JPEG", { timeout: 60_000 }, async () => {
    const r = await service.scan({ documentType: "PASSPORT", images: [fixture("passport-td3.jpg")] });
    expect(r).toMatchObject({
      documentType: "PASSPORT",
      format: "TD3",
      valid: true,
      documentNumber: { value: "L898902C3", valid: true },
      surname: { value: "ERIKSSON" },
      givenNames: { value: "ANNA MARIA" },
      birthDate: { value: "1974-08-12" },
      expiryDate: { value: "2012-04-15" },
      expired: true,
      tcIdentityNumber: null,
    });
  });

  it(
    "reads a TC kimlik card (PNG front, WebP back) with its TC identity number, also with the photos swapped",
    { timeout: 60_000 },
    async () => {
      for (const images of [
        [fixture("tc-kimlik-front.png"), fixture("tc-kimlik-back.webp")],
        [fixture("tc-kimlik-back.webp"), fixture("tc-kimlik-front.png")],
      ]) {
        const r = await service.scan({ documentType: "TC_KIMLIK", images });
        expect(r).toMatchObject({
          format: "TD1",
          valid: true,
          tcIdentityNumber: { value: "10000000146", valid: true },
          surname: { value: "YILMAZ" },
          givenNames: { value: "AYSE GUL" },
          birthDate: { value: "1990-02-15" },
          expiryDate: { value: "2032-06-01" },
          expired: false,
        });
        expect(r.documentNumber).toMatchObject({ value: "A01B23456", valid: true });
      }
    },
  );

  it("reports a failed check digit", { timeout: 60_000 }, async () => {
    const r = await service.scan({ documentType: "PASSPORT", images: [fixture("passport-td3-bad-check.png")] });
    expect(r.valid).toBe(false);
    expect(r.documentNumber).toEqual({ value: "L898902C3", valid: false });
    expect(r.problems).toContainEqual({ field: "documentNumber", reason: "check digit does not match" });
  });

  it("answers 422 when the photo has no MRZ of the expected kind", { timeout: 60_000 }, async () => {
    const err = await failure(service.scan({ documentType: "PASSPORT", images: [fixture("tc-kimlik-front.png")] }));
    expect(err.code).toBe("validation_failed");
    expect(err.details).toEqual([{ field: "images", reason: "no TD3 machine-readable zone found" }]);
  });

  it("refuses an unknown document type, a wrong count, a non-image and an undecodable image", async () => {
    expect(
      (await failure(service.scan({ documentType: "DRIVING_LICENCE", images: [fixture("passport-td3.jpg")] }))).details,
    ).toEqual([{ field: "documentType", reason: "must be one of TC_KIMLIK, PASSPORT" }]);
    expect((await failure(service.scan({ documentType: "", images: [] }))).details).toEqual([
      { field: "documentType", reason: "is required" },
    ]);
    const two = await failure(
      service.scan({ documentType: "PASSPORT", images: [fixture("passport-td3.jpg"), fixture("passport-td3.jpg")] }),
    );
    expect([two.code, two.details]).toEqual([
      "invalid_argument",
      [{ field: "images", reason: "PASSPORT needs exactly 1" }],
    ]);
    expect(
      (await failure(service.scan({ documentType: "TC_KIMLIK", images: [fixture("tc-kimlik-back.webp")] }))).details,
    ).toEqual([{ field: "images", reason: "TC_KIMLIK needs exactly 2" }]);
    const pdf = await failure(
      service.scan({
        documentType: "TC_KIMLIK",
        images: [fixture("tc-kimlik-front.png"), fixture("not-an-image.jpg")],
      }),
    );
    expect([pdf.code, pdf.details]).toEqual([
      "unsupported_media_type",
      [{ field: "images[1]", reason: "is not a JPEG, PNG or WebP image" }],
    ]);
    const truncated = {
      ...fixture("passport-td3.jpg"),
      content: readFileSync(new URL("../../../test/fixtures/identity/passport-td3.jpg", import.meta.url)).subarray(
        0,
        200,
      ),
    };
    const broken = await failure(service.scan({ documentType: "PASSPORT", images: [truncated] }));
    expect([broken.code, broken.details]).toEqual([
      "invalid_argument",
      [{ field: "images[0]", reason: "could not be decoded as an image" }],
    ]);
  });

  it("refuses an image over 6 MiB (the gRPC path, where the gateway's cut-off does not apply)", async () => {
    const big = Buffer.alloc(6 * 1024 * 1024 + 1);
    big.set([0xff, 0xd8, 0xff]);
    const err = await failure(
      service.scan({
        documentType: "PASSPORT",
        images: [{ content: big, contentType: "image/jpeg", filename: "big.jpg" }],
      }),
    );
    expect(err.code).toBe("payload_too_large");
  });

  it(
    "queues concurrent scans on the one worker, keeps the event loop free and turns away a full queue",
    { timeout: 60_000 },
    async () => {
      const delay = monitorEventLoopDelay({ resolution: 10 });
      delay.enable();
      const scans = Array.from({ length: 3 }, () =>
        service.scan({ documentType: "PASSPORT", images: [fixture("passport-td3.jpg")] }),
      );
      // the queue holds 3: a fourth is refused at once with 503, after the others' images are prepared
      const fourth = service.scan({ documentType: "PASSPORT", images: [fixture("passport-td3.jpg")] });
      const results = await Promise.allSettled([...scans, fourth]);
      delay.disable();
      const fulfilled = results.filter((r) => r.status === "fulfilled");
      const rejected = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
      expect(fulfilled.length).toBe(3);
      expect(rejected.map((r) => [(r.reason as AppError).code, (r.reason as AppError).retryAfterSeconds])).toEqual([
        ["unavailable", 5],
      ]);
      for (const r of fulfilled) expect(r.value.documentNumber.value).toBe("L898902C3");
      // OCR runs in a worker thread and sharp on the thread pool: the main thread never stalls for long
      expect(delay.max / 1e6).toBeLessThan(250);
    },
  );

  it("logs no personal data", () => {
    const log = lines.join("");
    expect(log).toContain("identity scan");
    for (const personal of ["ERIKSSON", "ANNA", "L898902C3", "YILMAZ", "10000000146", "1974", "A01B23456"])
      expect(log).not.toContain(personal);
  });
});
