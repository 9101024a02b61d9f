import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { createWorker, OEM, PSM, type Worker } from "tesseract.js";
import { AppError } from "../../errors.ts";
import type { Logger } from "../../lib/logger.ts";

/** Reads MRZ text from a prepared image. One worker thread, one recognition at a time, the rest wait in order. */
export interface OcrEngine {
  readMrzText(png: Buffer): Promise<string>;
  /** Stops the worker thread (a later call would start a new one). */
  close(): Promise<void>;
}

export interface OcrOptions {
  logger: Logger;
  /** Scans allowed to wait behind the running one before 503 (default 8). */
  maxWaiting?: number;
  /** A recognition that takes longer fails with 503 and its worker is replaced (default 30 s). */
  timeoutMs?: number;
}

const require = createRequire(import.meta.url);
/**
 * The English model of @tesseract.js-data/eng, read from node_modules: never downloaded at run time. Its
 * 4.0.0 file holds the legacy engine's model, which with a character whitelist reads the OCR-B `<` fillers
 * far better than the LSTM one. The engine itself (tesseract.js-core's wasm) is loaded from node_modules too.
 */
const LANG_PATH = join(dirname(require.resolve("@tesseract.js-data/eng/package.json")), "4.0.0");
const MRZ_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789<";

export function createOcrEngine(opts: OcrOptions): OcrEngine {
  const maxWaiting = opts.maxWaiting ?? 8;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  let worker: Promise<Worker> | undefined;
  let tail: Promise<unknown> = Promise.resolve();
  let waiting = 0;

  const start = async (): Promise<Worker> => {
    const w = await createWorker("eng", OEM.TESSERACT_ONLY, {
      langPath: LANG_PATH,
      gzip: true,
      cacheMethod: "none",
      // recognised text is personal data: tesseract.js must not print progress or errors with it
      logger: () => {},
      errorHandler: (err: unknown) => opts.logger.error({ err: String(err) }, "identity OCR worker error"),
    });
    await w.setParameters({
      tessedit_char_whitelist: MRZ_ALPHABET,
      tessedit_pageseg_mode: PSM.SINGLE_BLOCK,
      user_defined_dpi: "300",
    });
    return w;
  };
  const stop = async (): Promise<void> => {
    const w = worker;
    worker = undefined;
    await (await w?.catch(() => undefined))?.terminate().catch(() => undefined);
  };

  const recognize = async (png: Buffer): Promise<string> => {
    worker ??= start();
    const w = await worker.catch(async (err: unknown) => {
      worker = undefined;
      throw err;
    });
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new AppError("unavailable", "Reading the document took too long; try again.", { retryAfterSeconds: 5 }),
          ),
        timeoutMs,
      );
    });
    try {
      const result = await Promise.race([w.recognize(png), timeout]);
      return result.data.text;
    } catch (err) {
      await stop(); // a stuck or broken worker is replaced on the next call
      throw err;
    } finally {
      clearTimeout(timer);
    }
  };

  return {
    readMrzText(png) {
      if (waiting >= maxWaiting)
        throw new AppError("unavailable", "Too many identity scans are waiting; try again shortly.", {
          retryAfterSeconds: 5,
        });
      waiting++;
      const run = tail.then(() => recognize(png)).finally(() => waiting--);
      tail = run.catch(() => undefined);
      return run;
    },
    async close() {
      await tail;
      await stop();
    },
  };
}
