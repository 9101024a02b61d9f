import { PlatformSettings } from "./platform-settings.ts";

/** Every MikroORM entity of the service; modules add theirs here. */
export const entities = [PlatformSettings];
