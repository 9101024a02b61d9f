import type { DescMessage, JsonValue, Message, MessageInitShape } from "@bufbuild/protobuf";
import { fieldValue, planOf, render, shownFields, type RenderPlan } from "./codec.ts";
import { lazyListOf, type LazyList } from "../lib/lazy-list.ts";

/** About how many characters of JSON text a piece holds. */
export const PIECE_CHARS = 64 * 1024;

/** Leaf messages of a list rendered per JSON.stringify call: fewer calls, a bounded batch. */
const BATCH = 256;

/**
 * The codec's JSON text of a message, exactly as `JSON.stringify(render(desc, message))` spells it, in pieces of
 * about `size` characters (one piece for a smaller answer), produced as they are asked for: the whole text, and a
 * rendered tree of the whole answer, never exist at once. Messages that hold lists of messages are written field
 * by field and their lists element by element; every other value (a leaf message, a scalar, a map, a list of
 * scalars) is rendered by `render` and JSON.stringify as before, so the rules stay in one codec. `field`: the text
 * of the value under that JSON name only (a route's `response_body`), null when there is none.
 * A list of messages may stand for a LazyList (answerList in lib/lazy-list.ts): its parts are built as the text
 * reaches them.
 */
export function* jsonPieces(
  desc: DescMessage,
  message: Message | MessageInitShape<DescMessage>,
  field?: string,
  size = PIECE_CHARS,
): Generator<string, void, undefined> {
  const out: Out = { text: "", size };
  if (field === undefined) {
    yield* writeMessage(desc, message as Record<string, unknown>, out);
  } else {
    const msg = message as Record<string, unknown>;
    const p = shownFields(desc, msg).find((f) => f.json === field);
    if (p === undefined || !(yield* writeValue(p, fieldValue(p, msg), out, ""))) out.text = "null";
  }
  if (out.text !== "") yield out.text;
}

interface Out {
  text: string;
  size: number;
}

function take(out: Out): string {
  const t = out.text;
  out.text = "";
  return t;
}

function* writeMessage(desc: DescMessage, msg: Record<string, unknown>, out: Out): Generator<string> {
  if (!walked(desc) || !holdsMany(desc, msg, BATCH)) {
    out.text += JSON.stringify(render(desc, msg));
    if (out.text.length >= out.size) yield take(out);
    return;
  }
  let sep = "{";
  for (const p of shownFields(desc, msg)) {
    // JSON.stringify leaves out a key whose value renders as undefined
    if (yield* writeValue(p, fieldValue(p, msg), out, `${sep}${JSON.stringify(p.json)}:`)) sep = ",";
  }
  out.text += sep === "{" ? "{}" : "}";
}

/** Writes `prefix` and the field's value; false (nothing written) when the value renders as undefined. */
function* writeValue(p: RenderPlan, v: unknown, out: Out, prefix: string): Generator<string, boolean> {
  if (v != null && p.nested !== undefined && (p.list || walked(p.nested))) {
    out.text += prefix;
    const lazy = p.list ? lazyListOf(v as unknown[]) : undefined;
    if (lazy !== undefined) yield* writeParts(p.nested, lazy, out);
    else if (p.list) yield* writeList(p.nested, v as unknown[], out);
    else yield* writeMessage(p.nested, v as Record<string, unknown>, out);
  } else {
    const text = v == null ? p.zero : JSON.stringify(p.render(v));
    if (text === undefined) return false;
    out.text += prefix + text;
  }
  if (out.text.length >= out.size) yield take(out);
  return true;
}

/**
 * A list element by element: messages holding many others are walked, the rest rendered in batches of up to BATCH
 * per JSON.stringify call, each batch's "[a,b]" written without its brackets (as the whole list joins them).
 */
function* writeList(desc: DescMessage, items: readonly unknown[], out: Out): Generator<string> {
  const sep = yield* writeItems(desc, items, out, "[");
  out.text += sep === "[" ? "[]" : "]";
}

/** A LazyList: each part's elements as writeList writes them, the part built when the text reaches it. */
function* writeParts(desc: DescMessage, list: LazyList<unknown>, out: Out): Generator<string> {
  let sep = "[";
  for (const part of list.parts()) sep = yield* writeItems(desc, part, out, sep);
  out.text += sep === "[" ? "[]" : "]";
}

/** Writes `items` after `sep` ("[" before the first element, "," after one); returns the separator to go on with. */
function* writeItems(desc: DescMessage, items: readonly unknown[], out: Out, sep: string): Generator<string, string> {
  const walk = walked(desc);
  let batch: JsonValue[] = [];
  for (let i = 0; i <= items.length; i++) {
    const item = items[i] as Record<string, unknown>;
    const heavy = i < items.length && walk && holdsMany(desc, item, BATCH);
    if (batch.length > 0 && (i === items.length || heavy || batch.length === BATCH)) {
      out.text += sep + JSON.stringify(batch).slice(1, -1);
      sep = ",";
      batch = [];
      if (out.text.length >= out.size) yield take(out);
    }
    if (i === items.length) break;
    if (heavy) {
      out.text += sep;
      sep = ",";
      yield* writeMessage(desc, item, out);
    } else {
      batch.push(render(desc, item));
    }
  }
  return sep;
}

/** Whether `msg` holds at least `n` messages in lists, at any depth (a message with fewer is rendered whole). */
function holdsMany(desc: DescMessage, msg: Record<string, unknown>, n: number): boolean {
  return countDown(desc, msg, n) <= 0;
}

/** `n` less the messages in lists of `msg`, stopping at 0. */
function countDown(desc: DescMessage, msg: Record<string, unknown>, n: number): number {
  for (const p of shownFields(desc, msg)) {
    if (n <= 0) break;
    const v = p.nested !== undefined && (p.list || walked(p.nested)) ? fieldValue(p, msg) : undefined;
    if (v == null) continue;
    // a list built in parts is taken to be long
    if (p.list && lazyListOf(v as unknown[]) !== undefined) return 0;
    const items = (p.list ? v : [v]) as Record<string, unknown>[];
    if (p.list) n -= items.length;
    if (walked(p.nested!)) for (let i = 0; i < items.length && n > 0; i++) n = countDown(p.nested!, items[i]!, n);
  }
  return n;
}

const walks = new WeakMap<DescMessage, boolean>();

/** Messages that hold a list of messages, directly or in a message field: written field by field. */
function walked(desc: DescMessage): boolean {
  let w = walks.get(desc);
  if (w === undefined) {
    walks.set(desc, false); // a recursive type is not walked through itself
    w = planOf(desc).some((p) => p.nested !== undefined && (p.list || walked(p.nested)));
    walks.set(desc, w);
  }
  return w;
}
