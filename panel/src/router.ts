import { useEffect, useState } from "preact/hooks";

// Client-side routes under /panel (the server answers the app's page for every /panel path).
const listeners = new Set<() => void>();

export function navigate(to: string, replace = false): void {
  if (replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  for (const l of listeners) l();
}

addEventListener("popstate", () => {
  for (const l of listeners) l();
});

export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const l = () => setPath(location.pathname);
    listeners.add(l);
    return () => void listeners.delete(l);
  }, []);
  return path;
}

/** Same-origin links move within the app; modified clicks (new tab) keep the browser's behaviour. */
export function onLinkClick(e: MouseEvent): void {
  const a = (e.target as Element | null)?.closest("a");
  if (
    a === null ||
    a === undefined ||
    e.defaultPrevented ||
    e.button !== 0 ||
    e.metaKey ||
    e.ctrlKey ||
    e.shiftKey ||
    e.altKey
  )
    return;
  const href = a.getAttribute("href");
  if (href === null || !href.startsWith("/panel") || a.target !== "") return;
  e.preventDefault();
  navigate(href);
}
