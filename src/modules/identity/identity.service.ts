import { AppError, type FieldViolation } from "../../errors.ts";
import type { Clock } from "../../lib/clock.ts";
import type { Logger } from "../../lib/logger.ts";
import { prepareMrzImage, sniffImageType, UndecodableImageError } from "./image.ts";
import { findMrzLines, readMrz, type MrzFormat, type MrzReading } from "./mrz.ts";
import type { OcrEngine } from "./ocr.ts";

const documentTypes = ["TC_KIMLIK", "PASSPORT"] as const;
type DocumentType = (typeof documentTypes)[number];

/** Spec "Limits": identity photos, JPEG, PNG or WebP, at most 6 MiB each; TC_KIMLIK two, PASSPORT one. */
export const MAX_IMAGE_BYTES = 6 * 1024 * 1024;
const documents: Record<DocumentType, { images: number; format: MrzFormat; mrzFrom: number[]; describe: string }> = {
  // front, then back; the MRZ is on the back, but a swapped pair is read too
  TC_KIMLIK: { images: 2, format: "TD1", mrzFrom: [1, 0], describe: "two images (front and back)" },
  PASSPORT: { images: 1, format: "TD3", mrzFrom: [0], describe: "one image (the data page)" },
};
/** Where the MRZ sits: the bottom third of a passport page, the bottom half of a card back; then the whole photo. */
const bottomFractions: Record<MrzFormat, number[]> = { TD3: [1 / 3, 1], TD1: [1 / 2, 1] };

export interface UploadedImage {
  content: Uint8Array;
  contentType: string;
  filename: string;
}

interface IdentityScanInput {
  documentType: string;
  images: UploadedImage[];
}

interface IdentityScanResult extends MrzReading {
  documentType: DocumentType;
}

export interface IdentityScanService {
  /** Reads the document's MRZ. The images are used for this call only: never stored, never logged. */
  scan(input: IdentityScanInput): Promise<IdentityScanResult>;
}

export function createIdentityScanService(deps: { ocr: OcrEngine; clock: Clock; logger: Logger }): IdentityScanService {
  return {
    async scan(input) {
      const documentType = checkDocumentType(input.documentType);
      const doc = documents[documentType];
      if (input.images.length !== doc.images) {
        throw new AppError("invalid_argument", `${documentType} needs ${doc.describe}; got ${input.images.length}.`, {
          details: [{ field: "images", reason: `${documentType} needs exactly ${doc.images}` }],
        });
      }
      checkImages(input.images);
      const started = performance.now();
      const reading = await readDocument(
        input.images,
        doc.format,
        doc.mrzFrom,
        deps.ocr,
        deps.clock.now().toISOString().slice(0, 10),
      );
      // counts and flags only: the fields are personal data
      deps.logger.info(
        {
          documentType,
          format: reading.format,
          valid: reading.valid,
          problems: reading.problems.length,
          ms: Math.round(performance.now() - started),
        },
        "identity scan",
      );
      return { documentType, ...reading };
    },
  };
}

function checkDocumentType(value: string): DocumentType {
  const found = documentTypes.find((t) => t === value);
  if (found === undefined) {
    const reason = `must be one of ${documentTypes.join(", ")}`;
    throw new AppError("invalid_argument", value === "" ? "documentType is required." : `documentType ${reason}.`, {
      details: [{ field: "documentType", reason: value === "" ? "is required" : reason }],
    });
  }
  return found;
}

function checkImages(images: UploadedImage[]): void {
  const tooLarge: FieldViolation[] = [];
  const unsupported: FieldViolation[] = [];
  images.forEach((image, i) => {
    if (image.content.length > MAX_IMAGE_BYTES)
      tooLarge.push({ field: `images[${i}]`, reason: `is larger than ${MAX_IMAGE_BYTES} bytes` });
    else if (sniffImageType(image.content) === undefined)
      unsupported.push({ field: `images[${i}]`, reason: "is not a JPEG, PNG or WebP image" });
  });
  if (tooLarge.length > 0)
    throw new AppError("payload_too_large", `Each image may be at most ${MAX_IMAGE_BYTES} bytes (6 MiB).`, {
      details: tooLarge,
    });
  if (unsupported.length > 0)
    throw new AppError("unsupported_media_type", "Images must be JPEG, PNG or WebP.", { details: unsupported });
}

async function readDocument(
  images: UploadedImage[],
  format: MrzFormat,
  order: number[],
  ocr: OcrEngine,
  today: string,
): Promise<MrzReading> {
  const [zone, whole] = bottomFractions[format];
  // every photo is decoded before the (slow) OCR starts, so a broken one fails fast
  const zones = await Promise.all(images.map((image, i) => prepare(image, i, zone!)));
  for (const i of order) {
    const lines = findMrzLines(await ocr.readMrzText(zones[i]!), format);
    if (lines !== undefined) return readMrz(lines, { today });
  }
  for (const i of order) {
    const lines = findMrzLines(await ocr.readMrzText(await prepare(images[i]!, i, whole!)), format);
    if (lines !== undefined) return readMrz(lines, { today });
  }
  throw new AppError(
    "validation_failed",
    "No machine-readable zone could be read; retake the photo flat, in focus and without glare.",
    {
      details: [{ field: "images", reason: `no ${format} machine-readable zone found` }],
    },
  );
}

async function prepare(image: UploadedImage, i: number, bottomFraction: number): Promise<Buffer> {
  try {
    return await prepareMrzImage(image.content, bottomFraction);
  } catch (err) {
    if (err instanceof UndecodableImageError)
      throw new AppError("invalid_argument", `images[${i}] could not be decoded.`, {
        details: [{ field: `images[${i}]`, reason: "could not be decoded as an image" }],
      });
    throw err;
  }
}
