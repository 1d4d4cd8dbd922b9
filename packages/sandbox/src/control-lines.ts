/**
 * What starts a control line on a sandbox's stderr: the ASCII record separator, then
 * `skillbox:<kind> <payload>` up to the newline. The runner's `ctx.progress()` prints
 * `\u001eskillbox:progress {"progress":1,"total":3}`; a command skill may print the same.
 */
const CONTROL_LINE_PREFIX = "\u001eskillbox:";

/**
 * The longest control line read (bytes, the newline excluded); a longer one is dropped unread.
 * It is also the size a pipe writes at once, so a line this long never interleaves with others.
 */
export const MAX_CONTROL_LINE_BYTES = 4_096;

const RECORD_SEPARATOR = 0x1e;
const NEWLINE = 0x0a;
const PREFIX = Buffer.from(CONTROL_LINE_PREFIX);

/**
 * Splits a sandbox's stderr into control lines (handed to `control` as `kind` and `payload`) and
 * everything else (handed to `plain` as it comes, unchanged). A chunk without a record separator
 * passes through as is; a control line is collected up to {@link MAX_CONTROL_LINE_BYTES} and
 * dropped past that, so a flood or a line without end costs at most that much memory.
 */
export class ControlLineFilter {
  /** The control line being collected (it began with the record separator), or undefined. */
  private line: Buffer[] | undefined;
  private lineBytes = 0;
  /** A control line went past the limit: the rest of it, up to its newline, is dropped. */
  private skipping = false;
  /** Control lines seen whole and handed to `control`. */
  count = 0;
  /** Control lines dropped for their length. */
  dropped = 0;

  constructor(
    private readonly plain: (chunk: Buffer) => void,
    private readonly control: (kind: string, payload: string) => void,
  ) {}

  write(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      if (this.line === undefined && !this.skipping) {
        // Outside a control line newlines do not matter: only a record separator starts one.
        const mark = chunk.indexOf(RECORD_SEPARATOR, start);
        if (mark < 0) {
          this.plain(start === 0 ? chunk : chunk.subarray(start));
          return;
        }
        if (mark > start) this.plain(chunk.subarray(start, mark));
        this.line = [];
        this.lineBytes = 0;
        start = mark;
      }
      const newline = chunk.indexOf(NEWLINE, start);
      const end = newline < 0 ? chunk.length : newline;
      if (this.skipping) {
        if (newline >= 0) this.skipping = false;
        start = end + 1;
        continue;
      }
      const line = this.line as Buffer[];
      const undecided = this.lineBytes < PREFIX.length;
      // A copy: a stream may reuse its chunk once this returns.
      line.push(Buffer.from(chunk.subarray(start, end)));
      this.lineBytes += end - start;
      start = end;
      if (undecided && !startsLikeControl(line, this.lineBytes)) {
        // A record separator that starts no control line: plain output, as it came.
        this.line = undefined;
        this.plain(Buffer.concat(line, this.lineBytes));
        continue;
      }
      if (this.lineBytes > MAX_CONTROL_LINE_BYTES) {
        this.line = undefined;
        this.dropped++;
        this.skipping = newline < 0;
        start = end + 1;
        continue;
      }
      if (newline < 0) return;
      this.line = undefined;
      start = newline + 1;
      this.dispatch(Buffer.concat(line, this.lineBytes));
    }
  }

  /** The stream ended: a control line cut short is dropped, anything else was passed on already. */
  end(): void {
    if (this.line !== undefined) this.dropped++;
    this.line = undefined;
    this.skipping = false;
  }

  private dispatch(line: Buffer): void {
    const text = line.subarray(PREFIX.length).toString("utf8");
    const space = text.indexOf(" ");
    this.count++;
    this.control(space < 0 ? text : text.slice(0, space), space < 0 ? "" : text.slice(space + 1));
  }
}

/** Whether the bytes collected so far are (the start of) the control prefix. */
function startsLikeControl(line: Buffer[], bytes: number): boolean {
  const head = line.length === 1 ? (line[0] as Buffer) : Buffer.concat(line, bytes);
  const length = Math.min(head.length, PREFIX.length);
  return head.subarray(0, length).equals(PREFIX.subarray(0, length));
}
