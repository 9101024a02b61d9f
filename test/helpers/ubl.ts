import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { requireBinary } from "./prerequisites.ts";

/** The OASIS UBL 2.1 Invoice schema shipped under test/fixtures/ubl (see its README). */
const ublInvoiceXsd = fileURLToPath(new URL("../fixtures/ubl/xsd/maindoc/UBL-Invoice-2.1.xsd", import.meta.url));

/** Validates an XML document against the UBL 2.1 Invoice schema with xmllint; resolves with xmllint's complaints ("" when valid). */
export function validateUblInvoice(xml: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      requireBinary("xmllint", "libxml2-utils"),
      ["--noout", "--nonet", "--schema", ublInvoiceXsd, "-"],
      (err, _stdout, stderr) => {
        if (err !== null && typeof err.code !== "number") return reject(err);
        resolve(err === null ? "" : stderr || `xmllint exited ${String(err.code)}`);
      },
    );
    child.stdin!.end(xml);
  });
}
