import type { OutputInfo } from "sharp";

/** sharp (libvips, about 20 MiB resident) is loaded on the first scan, not by every process that never scans. */
let loaded: Promise<typeof import("sharp")> | undefined;
const loadSharp = async (): Promise<typeof import("sharp").default> => (await (loaded ??= import("sharp"))).default;

export type ImageType = "image/jpeg" | "image/png" | "image/webp";

/** The image type from the leading bytes (the declared Content-Type and file name are not trusted). */
export function sniffImageType(bytes: Uint8Array): ImageType | undefined {
  const at = (offset: number, ...expected: number[]): boolean => expected.every((b, i) => bytes[offset + i] === b);
  if (at(0, 0xff, 0xd8, 0xff)) return "image/jpeg";
  if (at(0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return "image/png";
  if (at(0, 0x52, 0x49, 0x46, 0x46) && at(8, 0x57, 0x45, 0x42, 0x50)) return "image/webp"; // RIFF....WEBP
  return undefined;
}

/** A decompression bomb (a tiny file of a huge, flat image) is refused before it is decoded: 8000 x 8000 at most. */
const MAX_INPUT_PIXELS = 64_000_000;
/** The working size: MRZ characters end up roughly 25-35 px high, where the OCR reads them best. */
const OCR_WIDTH = 1200;

export class UndecodableImageError extends Error {}

/**
 * Prepares a photo for MRZ reading: EXIF orientation applied, greyscale, scaled to the working width (up or
 * down), the bottom `bottomFraction` cut out (where the MRZ sits), contrast stretched and thresholded to black
 * on white. Runs on libuv's thread pool, not the event loop. The result is a PNG that lives only in memory.
 */
export async function prepareMrzImage(bytes: Uint8Array, bottomFraction: number): Promise<Buffer> {
  const sharp = await loadSharp();
  let raw: { data: Buffer; info: OutputInfo };
  try {
    raw = await sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS, failOn: "error" })
      .rotate()
      .greyscale()
      .resize({ width: OCR_WIDTH, height: 2 * OCR_WIDTH, fit: "inside" })
      .raw()
      .toBuffer({ resolveWithObject: true });
  } catch (err) {
    throw new UndecodableImageError((err as Error).message);
  }
  const { width, height, channels } = raw.info;
  const top = Math.min(height - 1, Math.floor(height * (1 - bottomFraction)));
  return sharp(raw.data, { raw: { width, height, channels } })
    .extract({ left: 0, top, width, height: height - top })
    .normalise()
    .threshold(128)
    .png({ compressionLevel: 1 })
    .toBuffer();
}
