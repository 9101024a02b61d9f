import { execFile } from "node:child_process";
import { requireBinary } from "./prerequisites.ts";

/** The text of a PDF as poppler's pdftotext reads it (layout kept), from its bytes. */
export function pdfText(pdf: Uint8Array): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      requireBinary("pdftotext", "poppler-utils"),
      ["-layout", "-enc", "UTF-8", "-", "-"],
      { maxBuffer: 16 << 20 },
      (err, stdout) => (err === null ? resolve(stdout) : reject(err)),
    );
    child.stdin!.end(pdf);
  });
}
