/** Whether every promise in `pending` (a live set) settles within `timeoutMs`. */
export async function settleWithin(pending: ReadonlySet<Promise<void>>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (pending.size > 0) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) return false;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), remaining);
    });
    const outcome = await Promise.race([Promise.allSettled([...pending]), timedOut]);
    clearTimeout(timer);
    if (outcome === "timeout") return pending.size === 0;
  }
  return true;
}
