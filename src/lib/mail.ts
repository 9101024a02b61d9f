import { mkdir, readdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Transporter } from "nodemailer";
import type { Config } from "../config.ts";
import { newId } from "./ids.ts";

interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  send(message: MailMessage): Promise<void>;
}

const mailFrom = "Hotel Operations <no-reply@hotelops.invalid>";

/**
 * Sends e-mail through SMTP_URL; without it, the dev outbox: one RFC 822 `.eml` file per message under
 * `${dataDir}/mail` (written to a temporary name, then renamed, so a reader never sees half a file).
 */
export function createMailer(config: Pick<Config, "smtpUrl" | "dataDir">): Mailer {
  // nodemailer (about 20 MiB resident) is loaded with the first message, not by every process that sends none
  let transport: Promise<Transporter> | undefined;
  const smtpUrl = config.smtpUrl;
  if (smtpUrl !== undefined) {
    return {
      async send(m) {
        transport ??= import("nodemailer").then((n) => n.createTransport(smtpUrl, { from: mailFrom }));
        await (await transport).sendMail({ to: m.to, subject: m.subject, text: m.text });
      },
    };
  }
  const dir = outboxDir(config.dataDir);
  return {
    async send(m) {
      transport ??= import("nodemailer").then((n) =>
        n.createTransport({ streamTransport: true, buffer: true, newline: "unix" }, { from: mailFrom }),
      );
      const info = await (await transport).sendMail({ to: m.to, subject: m.subject, text: m.text });
      await mkdir(dir, { recursive: true });
      const name = `${newId()}.eml`;
      await writeFile(join(dir, `.${name}.tmp`), info.message as Buffer);
      await rename(join(dir, `.${name}.tmp`), join(dir, name));
    },
  };
}

function outboxDir(dataDir: string): string {
  return join(dataDir, "mail");
}

export interface OutboxMessage extends MailMessage {
  file: string;
  raw: string;
}

/** The dev outbox, oldest first (file names are time-ordered ids). For tests and the local login flow. */
export async function readOutbox(dataDir: string): Promise<OutboxMessage[]> {
  const dir = outboxDir(dataDir);
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => n.endsWith(".eml") && !n.startsWith(".")).sort();
  } catch (err) {
    if ((err as { code?: unknown }).code === "ENOENT") return [];
    throw err;
  }
  const out: OutboxMessage[] = [];
  for (const name of names) {
    const raw = await readFile(join(dir, name), "utf8");
    out.push({ file: join(dir, name), raw, ...parseEml(raw) });
  }
  return out;
}

/** Enough of RFC 822 for our own plain-text messages: unfolded headers, quoted-printable or 7bit body. */
function parseEml(raw: string): MailMessage {
  const split = raw.indexOf("\n\n");
  const head = (split < 0 ? raw : raw.slice(0, split)).replace(/\n[ \t]+/g, " ");
  const body = split < 0 ? "" : raw.slice(split + 2);
  const header = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, "im").exec(head)?.[1]?.trim() ?? "";
  const encoding = header("Content-Transfer-Encoding").toLowerCase();
  let text = body;
  if (encoding === "quoted-printable") {
    text = Buffer.from(
      body.replace(/=\n/g, "").replace(/=([0-9A-F]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16))),
      "latin1",
    ).toString("utf8");
  } else if (encoding === "base64") {
    text = Buffer.from(body, "base64").toString("utf8");
  }
  return { to: header("To"), subject: decodeWords(header("Subject")), text: text.replace(/\n$/, "") };
}

function decodeWords(value: string): string {
  return value.replace(/=\?utf-8\?([BQ])\?([^?]*)\?=\s*/gi, (_, enc: string, data: string) =>
    enc.toUpperCase() === "B"
      ? Buffer.from(data, "base64").toString("utf8")
      : Buffer.from(
          data.replace(/_/g, " ").replace(/=([0-9A-F]{2})/gi, (_m, h: string) => String.fromCharCode(parseInt(h, 16))),
          "latin1",
        ).toString("utf8"),
  );
}
