import type { GuestService } from "../guests/index.ts";
import type { Deps, Module } from "../module.ts";
import { createIdentityScanService } from "./identity.service.ts";
import { identityMobileRpc } from "./identity.rpc.ts";
import { createOcrEngine, type OcrOptions } from "./ocr.ts";

export { MAX_IMAGE_BYTES } from "./identity.service.ts";
export { identityMobileRpc } from "./identity.rpc.ts";
export { type OcrOptions } from "./ocr.ts";
/**
 * Identity-document scan at check-in (MobileService.ScanIdentityDocument), which can save the person read as a
 * room line's guest (the guests module). The OCR worker thread starts on the first scan and stops with the app.
 */
export function createIdentityModule(
  deps: Pick<Deps, "clock" | "logger">,
  guests: GuestService,
  options: Omit<OcrOptions, "logger"> = {},
): Module & { mobileRpc: ReturnType<typeof identityMobileRpc> } {
  const ocr = createOcrEngine({ ...options, logger: deps.logger });
  const service = createIdentityScanService({ ocr, clock: deps.clock, logger: deps.logger });
  return {
    name: "identity",
    // MobileService is registered once, by the mobile module, with this part spread in (app.ts)
    mobileRpc: identityMobileRpc(service, guests),
    stop: () => ocr.close(),
  };
}
