/**
 * "Showing A–B of N" with the buttons to the pages around it. The next page starts at the
 * server's `nextOffset`, not at `offset + pageSize`: a page of large rows may end early.
 */
export function Pagination({
  offset,
  shown,
  total,
  nextOffset,
  pageSize,
  label,
  onOffset,
}: {
  offset: number;
  /** Rows on this page. */
  shown: number;
  total: number;
  nextOffset: number | null;
  pageSize: number;
  /** What the rows are ("executions"), for the navigation's accessible name. */
  label: string;
  onOffset: (offset: number) => void;
}) {
  // An empty page (past the end, or emptied meanwhile) shows no range: "0–0", not "0–50".
  const first = shown === 0 ? 0 : offset + 1;
  const last = shown === 0 ? 0 : offset + shown;
  return (
    <nav class="pagination" aria-label={`Pages of ${label}`}>
      <button
        type="button"
        class="secondary"
        disabled={offset === 0}
        onClick={() => onOffset(Math.max(0, offset - pageSize))}
      >
        Previous page
      </button>
      <span class="pagination-range">
        Showing {first}–{last} of {total}
      </span>
      <button
        type="button"
        class="secondary"
        disabled={nextOffset === null}
        onClick={() => {
          if (nextOffset !== null) onOffset(nextOffset);
        }}
      >
        Next page
      </button>
    </nav>
  );
}
