import { invalidField } from "../errors.ts";
import type { Deps } from "../modules/module.ts";

/** An operator command and the readers of its parsed arguments (a missing one is 400 naming the option). */

export interface CommandInput {
  positionals: string[];
  values: Record<string, string | boolean | undefined>;
}

export interface Command {
  summary: string;
  usage: string;
  options?: Record<string, { type: "string" | "boolean"; help: string }>;
  /** `json` is printed with --json, `text` otherwise; `exitCode` (default 0) is the process's status. */
  run(deps: Deps, input: CommandInput): Promise<{ json: object; text: string; exitCode?: number }>;
}

export function str(input: CommandInput, name: string, fallback?: string): string {
  const v = input.values[name];
  if (typeof v === "string" && v !== "") return v;
  if (fallback !== undefined) return fallback;
  throw invalidField(name, `--${name} is required`);
}

export function list(input: CommandInput, name: string): string[] {
  return str(input, name, "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}

export function positional(input: CommandInput, index: number, what: string): string {
  const v = input.positionals[index];
  if (v === undefined || v === "") throw invalidField(what, "is required");
  return v;
}
