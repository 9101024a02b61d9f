// Debian packages some tests need (.ci/run installs them; the README lists them under the two commands). A missing
// one fails its tests with one line that says what to install, not a stack trace from deep inside a client.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";

class MissingPrerequisite extends Error {
  constructor(what: string, packages: string) {
    super(`${what} is missing: install it with \`apt-get install -y ${packages}\``);
    this.name = "MissingPrerequisite";
    this.stack = `${this.name}: ${this.message}`;
  }
}

const CHROMIUM = "/usr/bin/chromium";

/** Debian's chromium, headless, without the background traffic this machine's closed network refuses. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new MissingPrerequisite(CHROMIUM, "chromium");
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
    ],
  });
}

/** Debian's python3 with the modules the Python client needs; returns the interpreter's path. */
export function requirePythonGrpc(): string {
  const python = "/usr/bin/python3";
  try {
    execFileSync(python, ["-c", "import grpc, google.protobuf, cryptography"], { stdio: "ignore" });
  } catch {
    throw new MissingPrerequisite(
      `${python} with grpc, protobuf and cryptography`,
      "python3 python3-grpcio python3-protobuf python3-cryptography",
    );
  }
  return python;
}

/** A program from a Debian package (xmllint, pdftotext, pgbouncer, haproxy, ...) on the PATH; returns its name. */
export function requireBinary(command: string, debianPackage: string): string {
  try {
    execFileSync("sh", ["-c", `command -v ${command}`], { stdio: "ignore" });
  } catch {
    throw new MissingPrerequisite(command, debianPackage);
  }
  return command;
}
