import { createContext } from "preact";
import { useContext } from "preact/hooks";
import { en, type Key } from "./strings-en.ts";
import { tr } from "./strings-tr.ts";

export type Lang = "tr" | "en";

export type { Key };

const dictionaries: Record<Lang, Record<Key, string>> = { en, tr };

export type T = (key: Key, params?: Record<string, string | number>) => string;

export function translator(lang: Lang): T {
  const dict = dictionaries[lang];
  return (key, params) => {
    let text = dict[key];
    if (params) for (const [k, v] of Object.entries(params)) text = text.replaceAll(`{${k}}`, String(v));
    return text;
  };
}

/** A key built from data (an event type, a status): the text when the dictionary has it, else undefined. */
export function lookup(lang: Lang, key: string): string | undefined {
  return (dictionaries[lang] as Record<string, string>)[key];
}

export function initialLang(): Lang {
  const saved = localStorage.getItem("hotelops.panel.lang");
  if (saved === "tr" || saved === "en") return saved;
  return navigator.language.toLowerCase().startsWith("en") ? "en" : "tr";
}

export function saveLang(lang: Lang): void {
  localStorage.setItem("hotelops.panel.lang", lang);
  document.documentElement.lang = lang;
}

/** Dates as people of the language read them (Turkish: 23.11.2026 14:05:09), in the browser's time zone. */
export function formatDate(lang: Lang, d: Date | undefined): string {
  if (d === undefined) return "";
  return new Intl.DateTimeFormat(lang === "tr" ? "tr-TR" : "en-GB", {
    dateStyle: "medium",
    timeStyle: "medium",
  }).format(d);
}

export interface I18n {
  lang: Lang;
  t: T;
}

export const I18nContext = createContext<I18n>({ lang: "tr", t: translator("tr") });
export const useI18n = (): I18n => useContext(I18nContext);
