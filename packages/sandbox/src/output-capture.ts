/**
 * Keeps the first `limit` bytes of a stream and counts the rest, so a process that prints
 * gigabytes costs the host no more than `limit` bytes of memory.
 */
export class OutputCapture {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  /** Every byte seen, kept or dropped. */
  totalBytes = 0;

  constructor(private readonly limit: number) {}

  /** Whether bytes were dropped. */
  get truncated(): boolean {
    return this.totalBytes > this.kept;
  }

  append(chunk: Buffer): void {
    this.totalBytes += chunk.length;
    const room = this.limit - this.kept;
    if (room <= 0) return;
    const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
    // A copy, so a kept slice does not pin the stream's whole (possibly large) buffer.
    this.chunks.push(part === chunk ? chunk : Buffer.from(part));
    this.kept += part.length;
  }

  /** The kept bytes as UTF-8 (a character cut at the limit becomes U+FFFD). */
  text(): string {
    return Buffer.concat(this.chunks, this.kept).toString("utf8");
  }
}
