import { useEffect } from "preact/hooks";

/** Sets the tab's title to `<title> · Skillbox Studio` while the view is shown. */
export function usePageTitle(title: string): void {
  useEffect(() => {
    document.title = `${title} · Skillbox Studio`;
  }, [title]);
}
